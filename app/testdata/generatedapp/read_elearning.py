"""Reads a migrated ELearningPlatform table as the application that AWS's
DynamoDB MCP server generates from the elearning design does.

Usage: read_elearning.py GENERATED_DIR TABLE < calls.json > answers.json

GENERATED_DIR holds what the server's repo_generation_tool wrote for the
design (codegen.py --schema ... --output GENERATED_DIR); boto3 finds
DynamoDB through AWS_ENDPOINT_URL_DYNAMODB and the usual AWS_* variables.

calls.json is a list of {"repo": class name, "method": name, "args": [...]};
answers.json the list of their answers in order: a GetItem's entity (its
fields, version aside, as JSON) or null, a Query's entities over every page
in the order DynamoDB returned them.
"""

import json
import sys
from decimal import Decimal

sys.path.insert(0, sys.argv[1])

import entities  # noqa: E402
import repositories  # noqa: E402
from boto3.dynamodb.conditions import Key  # noqa: E402
from pydantic import ConfigDict, model_validator  # noqa: E402


def strict(model):
    """The generated model, parsing in pydantic's strict mode: a string field
    must be an S, an integer field an integral N (boto3 gives a Decimal), a
    boolean a BOOL, an array a list. The generated models' lax mode would
    also take the text "123" for an integer."""

    def integral_decimals(cls, data):
        return {k: int(v) if isinstance(v, Decimal) and v == v.to_integral_value() else v for k, v in data.items()}

    return type('Strict' + model.__name__, (model,), {
        '__module__': __name__,
        'model_config': ConfigDict(strict=True),
        'integral_decimals': model_validator(mode='before')(classmethod(integral_decimals)),
    })


def collection_query(entity, prefix):
    """A Query method written as the generated stub's comments show: the
    entity's partition key, built by the generated key builder from the
    method's parameters, and begins_with on the sort key's prefix (the
    comments: "Item collection detected - multiple entities share PK ...
    Use begins_with(...) to filter for only ... items")."""

    def query(self, *args, limit=100, exclusive_start_key=None, skip_invalid_items=True):
        pk = entity.build_pk_for_lookup(*args)
        query_params = {'KeyConditionExpression': Key('pk').eq(pk) & Key('sk').begins_with(prefix), 'Limit': limit}
        if exclusive_start_key:
            query_params['ExclusiveStartKey'] = exclusive_start_key
        response = self.table.query(**query_params)
        return self._parse_query_response(response, skip_invalid_items)

    return query


# The design's Query patterns, generated as stubs.
QUERIES = {
    ('TenantCertificateRepository', 'get_user_certificates'): (entities.TenantCertificate, 'CERT#'),
    ('TenantEnrollmentRepository', 'get_user_enrollments'): (entities.TenantEnrollment, 'ENROLLMENT#'),
    ('TenantLessonRepository', 'get_course_lessons'): (entities.TenantLesson, 'LESSON#'),
    ('TenantProgressRepository', 'get_user_course_progress'): (entities.TenantProgress, 'PROGRESS#'),
}


def repository(name, table, cache={}):
    if name not in cache:
        base = getattr(repositories, name)
        methods = {m: collection_query(*q) for (r, m), q in QUERIES.items() if r == name}
        repo = type(name, (base,), methods)(table)
        repo.model_class = strict(repo.model_class)
        cache[name] = repo
    return cache[name]


def fields(entity):
    return entity.model_dump(mode='json', exclude={'version'})


def main():
    answers = []
    for call in json.load(sys.stdin):
        repo = repository(call['repo'], sys.argv[2])
        method = getattr(repo, call['method'])
        if (call['repo'], call['method']) not in QUERIES:
            e = method(*call['args'])
            answers.append(None if e is None else fields(e))
            continue
        out, start = [], None
        while True:  # every page, 5 items a page; an item that does not parse fails
            items, start = method(*call['args'], limit=5, exclusive_start_key=start, skip_invalid_items=False)
            out += [fields(e) for e in items]
            if not start:
                break
        answers.append(out)
    json.dump(answers, sys.stdout)


if __name__ == '__main__':
    main()
