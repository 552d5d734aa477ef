"""make bench's comparison for the JSON Schema validator: Python's jsonschema (Draft7Validator,
with every schema of a folder registered by its $id, nothing fetched) validating one document
over and over for some seconds. Prints the same one line of JSON as json-schema-bench.

usage: bench_json_schema.py SCHEMA-DIR ROOT-FILE DOCUMENT SECONDS
"""
import importlib.metadata
import json
import pathlib
import sys
import time

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7


def main():
    directory, root_name, document_path, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    resources = []
    root = None
    for path in sorted(pathlib.Path(directory).glob("*.json")):
        schema = json.loads(path.read_text())
        if "$id" not in schema:
            continue
        resources.append((schema["$id"], Resource.from_contents(schema, default_specification=DRAFT7)))
        if path.name == root_name:
            root = schema
    registry = Registry().with_resources(resources)
    validator = jsonschema.Draft7Validator(root, registry=registry)
    document = json.loads(pathlib.Path(document_path).read_text())
    count, valid = 0, True
    start = time.perf_counter()
    end = start + seconds
    while time.perf_counter() < end:
        for _ in range(100):
            valid = validator.is_valid(document) and valid
        count += 100
    elapsed = time.perf_counter() - start
    problems = len(list(validator.iter_errors(document)))
    print(json.dumps({"documentsPerSecond": int(count / elapsed), "valid": valid, "problems": problems,
                      "jsonschema": importlib.metadata.version("jsonschema")}))


if __name__ == "__main__":
    main()
