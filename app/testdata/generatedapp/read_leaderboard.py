"""Reads a migrated LeaderboardTable as the application that AWS's DynamoDB
MCP server generates from the gaming_leaderboard design does.

Usage: read_leaderboard.py GENERATED_DIR TABLE < requests.json > answers.json

GENERATED_DIR holds the entities.py, repositories.py and base_repository.py
that the server's repo_generation_tool wrote for the design (codegen.py
--schema ... --output GENERATED_DIR). boto3 finds DynamoDB as the generated
code leaves it to (boto3.resource('dynamodb')): AWS_ENDPOINT_URL_DYNAMODB and
the usual AWS_* variables.

requests.json: {"get": [[game_id, score], ...], "top": [game_id, ...],
"player": [player_id, ...]}. answers.json: {"get": [entry or null, ...],
"top": {game_id: [entry, ...]}, "player": {player_id: [entry, ...]}}, each
entry the model's fields (version aside) as JSON, in the order DynamoDB
returned them.
"""

import json
import sys
from decimal import Decimal

sys.path.insert(0, sys.argv[1])

from boto3.dynamodb.conditions import Key  # noqa: E402
from entities import LeaderboardEntry  # noqa: E402
from pydantic import ConfigDict, model_validator  # noqa: E402
from repositories import LeaderboardEntryRepository  # noqa: E402


class StrictLeaderboardEntry(LeaderboardEntry):
    """The generated model, parsing in pydantic's strict mode: a string
    field must be a string (an S), an integer field an integral number (an
    N; boto3 gives a Decimal). The generated model's lax mode would also
    take the text "123" for an integer, and hide a key written as S."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode='before')
    @classmethod
    def integral_decimals(cls, data):
        return {k: int(v) if isinstance(v, Decimal) and v == v.to_integral_value() else v for k, v in data.items()}


class Repository(LeaderboardEntryRepository):
    """The generated repository. get_leaderboard_entry is generated whole and
    used as it is. get_top_scores and get_player_scores are generated as
    stubs whose comments show the query to write ("TODO: Implement Access
    Pattern"); they are written here as those comments show, with the key
    condition the design declares: the partition key alone (the game's item
    collection), and the GSI's partition key."""

    def __init__(self, table_name):
        super().__init__(table_name)
        self.model_class = StrictLeaderboardEntry

    def get_top_scores(self, game_id, limit=100, exclusive_start_key=None, skip_invalid_items=True):
        pk = LeaderboardEntry.build_pk_for_lookup(game_id)
        query_params = {'KeyConditionExpression': Key('game_id').eq(pk), 'Limit': limit, 'ConsistentRead': False}
        if exclusive_start_key:
            query_params['ExclusiveStartKey'] = exclusive_start_key
        response = self.table.query(**query_params)
        return self._parse_query_response(response, skip_invalid_items)

    def get_player_scores(self, player_id, limit=100, exclusive_start_key=None, skip_invalid_items=True):
        gsi_pk = LeaderboardEntry.build_gsi_pk_for_lookup_player_scores_index(player_id)
        query_params = {'IndexName': 'PlayerScoresIndex', 'KeyConditionExpression': Key('player_id').eq(gsi_pk), 'Limit': limit}
        if exclusive_start_key:
            query_params['ExclusiveStartKey'] = exclusive_start_key
        response = self.table.query(**query_params)
        return self._parse_query_response(response, skip_invalid_items)


def fields(entry):
    return entry.model_dump(mode='json', exclude={'version'})


def every_page(method, arg):
    """All pages of a query method, 20 items a page, as an application
    pages with the continuation token; an item that does not parse fails."""
    out, start = [], None
    while True:
        items, start = method(arg, limit=20, exclusive_start_key=start, skip_invalid_items=False)
        out += [fields(e) for e in items]
        if not start:
            return out


def main():
    req = json.load(sys.stdin)
    repo = Repository(sys.argv[2])
    answers = {'get': [], 'top': {}, 'player': {}}
    for game_id, score in req['get']:
        e = repo.get_leaderboard_entry(game_id, score)
        answers['get'].append(None if e is None else fields(e))
    for game_id in req['top']:
        answers['top'][game_id] = every_page(repo.get_top_scores, game_id)
    for player_id in req['player']:
        answers['player'][player_id] = every_page(repo.get_player_scores, player_id)
    json.dump(answers, sys.stdout)


if __name__ == '__main__':
    main()
