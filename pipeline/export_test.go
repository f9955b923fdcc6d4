package pipeline

// KeysUnique lets tests replace the proof of unique keys Run relies on.
var KeysUnique = &keysUnique
