package extract

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// DescribeRelation is NewCatalog(conn).Relation(ctx, ident).
func DescribeRelation(ctx context.Context, conn *pgx.Conn, ident pgx.Identifier) (Relation, error) {
	return NewCatalog(conn).Relation(ctx, ident)
}
