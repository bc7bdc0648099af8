"""The pydantic models of ``agent_judge.models`` against the OpenAPI 3.1 document the running gate service serves
(``GET /v1/openapi.json``, made from the same zod schemas that validate its requests): every field's name, whether
it is required, its JSON types, whether it may be null and its enum, at every depth the models describe; for requests
also every bound (pattern, lengths, minimum, maximum, items), so a request this package accepts is one the service
accepts. A field added, renamed or retyped on either side fails here.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from agent_judge import models as m

from .conftest import Service

Json = dict[str, Any]

BOUNDS = ("pattern", "minLength", "maxLength", "minimum", "maximum", "maxItems", "minItems")


@pytest.fixture(scope="module")
def document(service: Service) -> Json:
    res = httpx.get(f"{service.url}/v1/openapi.json", timeout=30)
    res.raise_for_status()
    doc: Json = res.json()
    assert doc["openapi"] == "3.1.0"
    return doc


def _resolve(schema: Json, defs: Json) -> Json:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = defs[name]
    return schema


def _branches(schema: Json, defs: Json) -> list[Json]:
    schema = _resolve(schema, defs)
    if isinstance(schema.get("type"), list):
        return [{**schema, "type": t} for t in schema["type"]]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            out: list[Json] = []
            for b in schema[key]:
                out.extend(_branches(b, defs))
            return out
    return [schema]


def facts(
    schema: Json, defs: Json, *, bounds: bool, where: str, optional_is_absent: bool = False, python: bool = False
) -> Any:
    """What a schema says, normalized: types, nullability, enum, bounds, and its object's fields or array's items."""
    branches = _branches(schema, defs)
    # A model's optional field is `X | None = None`: None stands for "absent" (a request's body() leaves it out).
    nullable = any(b.get("type") == "null" for b in branches) and not optional_is_absent
    values = [b for b in branches if b.get("type") != "null"]
    types = sorted({b.get("type", "any") for b in values})
    out: Json = {"types": types, "nullable": nullable}
    if values and all("enum" in b or "const" in b for b in values):
        out["enum"] = sorted(str(v) for b in values for v in (b["enum"] if "enum" in b else [b["const"]]))
    if len(values) == 1:
        only = values[0]
        if bounds:
            out.update({k: only[k] for k in BOUNDS if k in only})
        if only.get("type") == "object" and "properties" in only:
            out["object"] = object_facts(only, defs, bounds=bounds, where=where, python=python)
        if only.get("type") == "array" and "items" in only:
            out["items"] = facts(only["items"], defs, bounds=bounds, where=f"{where}[]", python=python)
    return out


def object_facts(schema: Json, defs: Json, *, bounds: bool, where: str, python: bool = False) -> Json:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return {
        "required": sorted(required),
        "fields": {
            k: facts(
                v,
                defs,
                bounds=bounds,
                where=f"{where}.{k}",
                optional_is_absent=python and k not in required,
                python=python,
            )
            for k, v in props.items()
        },
    }


def _opaque_python_objects(py: Any, doc: Any) -> Any:
    """Where the model keeps a field as a plain mapping (``dict[str, Any]``), the document's inner fields are not
    compared: the model says it does not describe them (its type, nullability and presence still are)."""
    if isinstance(py, dict) and isinstance(doc, dict):
        if "object" in doc and "object" not in py and py.get("types") == ["object"]:
            doc = {k: v for k, v in doc.items() if k != "object"}
        return {k: _opaque_python_objects(py.get(k), v) for k, v in doc.items()}
    return doc


def compare(model: type[BaseModel], doc_schema: Json, document: Json, *, bounds: bool) -> None:
    doc_defs = document["components"]["schemas"]
    py_schema = model.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
    py_defs = py_schema.get("$defs", {})
    py = object_facts(_resolve(py_schema, py_defs), py_defs, bounds=bounds, where=model.__name__, python=True)
    doc = object_facts(_resolve(doc_schema, doc_defs), doc_defs, bounds=bounds, where=model.__name__)
    doc = _opaque_python_objects(py, doc)
    assert sorted(py["fields"]) == sorted(doc["fields"]), f"{model.__name__}: field names differ"
    assert py["required"] == doc["required"], f"{model.__name__}: required fields differ"
    for name in doc["fields"]:
        assert py["fields"][name] == doc["fields"][name], (
            f"{model.__name__}.{name} differs: python {py['fields'][name]} != service {doc['fields'][name]}"
        )


def test_requests_match_field_for_field_with_their_bounds(document: Json) -> None:
    schemas = document["components"]["schemas"]
    compare(m.CallRequest, schemas["CallRequest"], document, bounds=True)
    compare(m.OutcomeRequest, schemas["OutcomeRequest"], document, bounds=True)
    compare(m.RedeemRequest, schemas["RedeemRequest"], document, bounds=True)


def test_every_answer_kind_matches_its_model(document: Json) -> None:
    schemas = document["components"]["schemas"]
    variants = {_resolve(v, schemas)["properties"]["kind"]["const"]: v for v in schemas["CallAnswer"]["oneOf"]}
    models: dict[str, type[BaseModel]] = {
        "forward": m.Forward,
        "deny": m.Deny,
        "clarify": m.Clarify,
        "pending": m.Pending,
        "refused": m.Refused,
    }
    assert sorted(variants) == sorted(models)
    for kind, model in models.items():
        compare(model, variants[kind], document, bounds=False)


def test_other_answers_match(document: Json) -> None:
    schemas = document["components"]["schemas"]
    compare(m.OutcomeAnswer, schemas["OutcomeAnswer"], document, bounds=False)
    compare(m.RedeemAnswer, schemas["RedeemAnswer"], document, bounds=False)
    compare(m.ProposalOutcome, schemas["ProposalOutcome"], document, bounds=False)
    compare(m.ErrorBody, schemas["Error"], document, bounds=False)


def test_the_client_speaks_every_route_the_service_has(document: Json) -> None:
    routes = {(method.upper(), path) for path, ops in document["paths"].items() for method in ops}
    assert routes == {
        ("POST", "/v1/calls"),  # GateClient.decide
        ("POST", "/v1/calls/{id}/outcome"),  # GateClient.report
        ("POST", "/v1/capabilities/redeem"),  # GateClient.redeem_capability
        ("POST", "/v1/proposals"),  # GateClient.submit_proposal
        ("GET", "/v1/proposals/{id}"),  # GateClient.get_proposal
        ("POST", "/v1/proposals/{id}/clarification"),  # GateClient.clarify
    }
