"""The spec check (preflight/provider/schema.py) where a spec's structure decides what is checked: `$ref` chains,
`allOf` inheritance (with a parent that is not vendored), discriminated subtypes, read-only properties, and
values the engine sends as secrets.

Two kinds of spec: the vendored ones (preflight/provider/azure_specs, azure-rest-api-specs extracts), and small specs
written here in the same OpenAPI 2.0 / autorest form (swagger.io/specification/v2: `$ref`, `allOf`,
`discriminator`, `readOnly`; autorest docs/extensions: `x-ms-discriminator-value`, defaulting to the
definition's name) for shapes the vendored extracts do not hold, each checked as a REST request body.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.provider import schema
from preflight.wire import SECRET_SIG, SIG_KEY, UNKNOWN

FILE = "example/resource-manager/Example.Things/stable/2020-01-01/things.json"
OPERATION = "Things_Create"
VERSION = "2020-01-01"
TOKEN = "example:things:Thing"  # as azure-native names it, checked in the SDK shape
MISSING_PARENT = "../../../../../common-types/resource-management/v5/types.json#/definitions/Resource"


def _clear() -> None:
    schema._load.cache_clear()
    schema.index.cache_clear()
    schema.metadata.cache_clear()


@pytest.fixture
def specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty spec tree in place of preflight/provider/azure_specs (the vendored tree is untouched)."""
    root = tmp_path / "azure_specs"
    root.mkdir()
    (root / "naming-rules.json").write_text(json.dumps({"rules": []}))
    monkeypatch.setattr(schema, "SPECS", root)
    _clear()
    yield root
    _clear()


def _write(
    root: Path,
    definitions: dict[str, Any],
    *,
    body: str = "Thing",
    route: str = "/things/{thingName}",
    parameters: list[dict[str, Any]] | None = None,
    **files: Any,
) -> None:
    """One PUT operation (`route`) whose body is `#/definitions/<body>`; `parameters` replaces its list."""
    spec = {
        "swagger": "2.0",
        "paths": {
            route: {
                "put": {
                    "operationId": OPERATION,
                    "parameters": parameters
                    or [
                        {"name": "thingName", "in": "path", "required": True, "type": "string"},
                        {"name": "body", "in": "body", "schema": {"$ref": f"#/definitions/{body}"}},
                    ],
                }
            }
        },
        "definitions": definitions,
    }
    path = root / FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec))
    for relative, document in files.items():
        other = root / relative.replace("__", "/")
        other.parent.mkdir(parents=True, exist_ok=True)
        other.write_text(json.dumps(document))
    entry = {VERSION: {"file": FILE, "operationId": OPERATION}}
    index = {"operations": {OPERATION: entry}, "resources": {TOKEN: entry}}
    (root / "index.json").write_text(json.dumps(index))
    _clear()


def _check(body: dict[str, Any]) -> schema.Result:
    result = schema.check_request(OPERATION, VERSION, {"thingName": "t"}, body)
    assert result.checked, result.why
    return result


def _found(result: schema.Result) -> list[tuple[str, str]]:
    return [(f.path, f.constraint) for f in result.failures]


# --- $ref chains ---


def _chain(length: int) -> dict[str, Any]:
    """Thing -> R1 -> ... -> R<length> -> a string of at most 3 characters."""
    definitions: dict[str, Any] = {
        "Thing": {"type": "object", "properties": {"code": {"$ref": "#/definitions/R1"}}}
    }
    for i in range(1, length):
        definitions[f"R{i}"] = {"$ref": f"#/definitions/R{i + 1}"}
    definitions[f"R{length}"] = {"type": "string", "maxLength": 3}
    return definitions


@pytest.mark.parametrize("hops", [1, 31, 32])
def test_a_ref_chain_up_to_32_hops_is_followed_to_its_constraint(specs: Path, hops: int) -> None:
    _write(specs, _chain(hops))
    assert _found(_check({"code": "abcd"})) == [("code", "maxLength 3")]
    assert _found(_check({"code": "abc"})) == []


def test_a_ref_loop_is_a_spec_error_naming_where_it_loops(specs: Path) -> None:
    definitions = _chain(3)
    definitions["R3"] = {"$ref": "#/definitions/R1"}  # R1 -> R2 -> R3 -> R1 ...
    _write(specs, definitions)
    with pytest.raises(schema.SpecError, match=r"^\$ref loop at .*things\.json#/definitions/R\d$"):
        _check({"code": "abc"})


def test_a_chain_longer_than_32_hops_is_reported_as_a_loop(specs: Path) -> None:
    _write(specs, _chain(33))
    with pytest.raises(schema.SpecError, match="loop"):
        _check({"code": "abc"})


# --- allOf ---


def test_a_parent_that_is_not_vendored_does_not_hide_the_next_parents_rules(specs: Path) -> None:
    definitions = {
        "Thing": {
            "allOf": [
                {"$ref": MISSING_PARENT},
                {"$ref": "#/definitions/Named"},
            ],
            "properties": {"size": {"type": "integer", "minimum": 1}},
        },
        "Named": {
            "type": "object",
            "required": ["label"],
            "properties": {"label": {"type": "string", "maxLength": 5}},
        },
    }
    _write(specs, definitions)
    result = _check({"size": 0})
    assert _found(result) == [("label", "required"), ("size", "minimum 1")]
    assert result.unchecked == [
        "(body): inherited common-types/resource-management/v5/types.json#/definitions/Resource"
    ]
    assert _found(_check({"label": "toolong", "size": 2})) == [("label", "maxLength 5")]


def test_a_parent_not_vendored_under_a_property_is_listed_at_that_property(specs: Path) -> None:
    definitions = {
        "Thing": {"type": "object", "properties": {"inner": {"$ref": "#/definitions/Inner"}}},
        "Inner": {
            "allOf": [{"$ref": "missing.json#/definitions/Base"}],
            "properties": {"x": {"type": "string"}},
        },
    }
    _write(specs, definitions)
    assert _check({"inner": {"x": "y"}}).unchecked == ["inner: inherited missing.json#/definitions/Base"]


def test_the_keys_of_an_object_known_only_from_a_missing_parent_are_listed_as_not_checked(
    specs: Path,
) -> None:
    definitions = {
        "Thing": {"type": "object", "properties": {"inner": {"$ref": "#/definitions/Inner"}}},
        "Inner": {"allOf": [{"$ref": "missing.json#/definitions/Base"}]},
    }
    _write(specs, definitions)
    result = _check({"inner": {"x": "y"}})
    assert result.failures == []
    assert result.unchecked == [
        "inner.x: not in the vendored spec",
        "inner: inherited missing.json#/definitions/Base",
    ]


def test_a_map_type_inherits_its_parents_value_schema(specs: Path) -> None:
    definitions = {
        "Thing": {"type": "object", "properties": {"labels": {"$ref": "#/definitions/Labels"}}},
        "Labels": {"allOf": [{"$ref": "#/definitions/StringMap"}]},
        "StringMap": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 4}},
    }
    _write(specs, definitions)
    assert _found(_check({"labels": {"team": "ml", "env": "production"}})) == [("labels.env", "maxLength 4")]


# --- discriminated subtypes ---


def _union(second_value: dict[str, Any]) -> dict[str, Any]:
    return {
        "Thing": {"type": "object", "properties": {"shape": {"$ref": "#/definitions/Shape"}}},
        "Shape": {
            "type": "object",
            "discriminator": "kind",
            "required": ["kind"],
            "properties": {
                "kind": {
                    "type": "string",
                    "enum": ["Circle", "Square", "Triangle"],
                    "x-ms-enum": {"name": "ShapeKind", "modelAsString": True},
                }
            },
        },
        # another union's subtype first, with the same discriminator value: not a Shape
        "Other": {"allOf": [{"$ref": "#/definitions/Unrelated"}], "x-ms-discriminator-value": "Circle"},
        "Unrelated": {"type": "object", "discriminator": "kind", "required": ["unrelated"], "properties": {}},
        "Circle": {
            "allOf": [{"$ref": "#/definitions/Shape"}],
            "x-ms-discriminator-value": "Circle",
            "properties": {"radius": {"type": "number", "minimum": 0}},
        },
        "Square": {"allOf": [{"$ref": "#/definitions/Shape"}], **second_value},
    }


def test_the_subtype_is_the_one_deriving_from_the_union(specs: Path) -> None:
    _write(specs, _union({"properties": {"side": {"type": "number", "maximum": 10}}}))
    assert _found(_check({"shape": {"kind": "Circle", "radius": 1}})) == []
    assert _found(_check({"shape": {"kind": "Circle", "radius": -1}})) == [("shape.radius", "minimum 0")]


def test_a_subtype_without_a_discriminator_value_is_named_by_its_definition(specs: Path) -> None:
    _write(specs, _union({"properties": {"side": {"type": "number", "maximum": 10}}}))
    assert _found(_check({"shape": {"kind": "Square", "side": 11}})) == [("shape.side", "maximum 10")]
    # a value the enum lists without a vendored subtype is not checked; one it does not list fails
    triangle = _check({"shape": {"kind": "Triangle"}})
    assert triangle.failures == [] and triangle.unchecked == ["shape: kind 'Triangle' (subtype not vendored)"]
    (hexagon,) = _check({"shape": {"kind": "Hexagon"}}).failures
    assert (hexagon.path, hexagon.constraint) == ("shape.kind", "one of Circle, Square, Triangle")
    assert hexagon.reason == (
        "'shape.kind' is 'Hexagon', not one of the values the spec defines: Circle, Square, Triangle"
    )
    assert hexagon.source == f"{FILE}#/definitions/Shape/properties/kind"  # where the enum is written


def test_a_body_that_is_itself_a_union_names_the_body(specs: Path) -> None:
    _write(specs, _union({}), body="Shape")
    assert _check({"kind": "Triangle"}).unchecked == ["(body): kind 'Triangle' (subtype not vendored)"]
    assert _found(_check({"kind": "Circle", "radius": -2})) == [("radius", "minimum 0")]


def test_the_discriminator_is_read_by_its_wire_name_in_a_request_and_its_sdk_name_in_the_inputs(
    specs: Path,
) -> None:
    definitions = {
        "Thing": {
            "type": "object",
            "discriminator": "Shape_Kind",
            "properties": {"Shape_Kind": {"type": "string"}},
        },
        "Circle": {
            "allOf": [{"$ref": "#/definitions/Thing"}],
            "properties": {"radius": {"type": "number", "minimum": 0}},
        },
    }
    _write(specs, definitions)
    assert _found(_check({"Shape_Kind": "Circle", "radius": -1})) == [("radius", "minimum 0")]
    sdk = schema.check_resource(
        TOKEN, {"azureApiVersion": VERSION, "thingName": "t", "shapeKind": "Circle", "radius": -1}
    )
    assert _found(sdk) == [("radius", "minimum 0")]


# --- read-only properties ---


def test_read_only_properties_are_not_inputs(specs: Path) -> None:
    definitions = {
        "Thing": {
            "type": "object",
            "required": ["state", "name"],
            "properties": {
                "state": {"type": "string", "readOnly": True, "maxLength": 2},
                "name": {"type": "string"},
            },
        }
    }
    _write(specs, definitions)
    # a required read-only property is the service's to fill: not missing; one sent is not checked
    result = _check({"name": "n", "state": "Succeeded"})
    assert result.failures == []
    assert result.unchecked == ["state: not in the vendored spec"]


# --- limits at, below and above ---
# pulumi-azure-native provider/pkg/provider/provider.go validateProperty: `value < *prop.Minimum` fails
# "'%s' is too low (%f < %f)", `value > *prop.Maximum` "'%s' is too high (%f > %f)" (Go %f: six decimals).

LIMITS = {
    "Thing": {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "minimum": 1, "maximum": 4},
            "ratio": {"type": "number", "minimum": 0.5, "maximum": 1.5},
            "code": {"type": "string", "minLength": 2, "maxLength": 3},
            "flag": {"type": "boolean"},
            "items": {"type": "array", "items": {"type": "string", "maxLength": 1}},
        },
    }
}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"count": 0}, [("count", "minimum 1")]),
        ({"count": 1}, []),
        ({"count": 4}, []),
        ({"count": 5}, [("count", "maximum 4")]),
        ({"count": 2.5}, [("count", "integer")]),
        ({"count": 2.0}, []),  # integral: an integer (Check compares the float's value)
        ({"ratio": 0.49}, [("ratio", "minimum 0.5")]),
        ({"ratio": 0.5}, []),
        ({"ratio": 1.5}, []),
        ({"ratio": 1.51}, [("ratio", "maximum 1.5")]),
        ({"code": "a"}, [("code", "minLength 2")]),
        ({"code": "ab"}, []),
        ({"code": "abc"}, []),
        ({"code": "abcd"}, [("code", "maxLength 3")]),
        ({"code": ""}, [("code", "minLength 2")]),  # empty strings are checked too
        ({"code": 12}, [("code", "type string")]),
        ({"code": ["ab"]}, [("code", "type string")]),
        ({"code": {"a": "b"}}, [("code", "type string")]),
        ({"count": True}, [("count", "type integer")]),
        ({"flag": "true"}, [("flag", "type boolean")]),
        ({"flag": False}, []),
        ({"items": ["a", "bc"]}, [("items[1]", "maxLength 1")]),
        ({"items": "a"}, [("items", "type array")]),
    ],
)
def test_limits_and_types_at_their_edges(specs: Path, body: dict[str, Any], expected: list) -> None:
    _write(specs, LIMITS)
    assert _found(_check(body)) == expected


def test_the_reasons_are_the_providers_wording(specs: Path) -> None:
    _write(specs, LIMITS)
    reasons = [f.reason for f in _check({"count": 5, "ratio": 0.25, "code": 7}).failures]
    assert reasons == [
        "'count' is too high (5.000000 > 4.000000)",
        "'ratio' is too low (0.250000 < 0.500000)",
        "'code' should be of type 'string' but got a number",
    ]


# --- the two shapes: REST body and azure-native inputs ---


def _inputs(**values: Any) -> list[tuple[str, str]]:
    inputs = {"azureApiVersion": VERSION, "thingName": "t", **values}
    return _found(schema.check_resource(TOKEN, inputs))


def test_a_property_is_named_by_its_wire_name_in_the_body_and_its_sdk_name_in_the_inputs(specs: Path) -> None:
    # azure-native's SdkName: `Max_Count` -> `maxCount` (lower camel case, `_` dropped)
    definitions = {
        "Thing": {"type": "object", "properties": {"Max_Count": {"type": "integer", "maximum": 4}}}
    }
    _write(specs, definitions)
    assert _found(_check({"Max_Count": 5})) == [("Max_Count", "maximum 4")]
    assert _inputs(maxCount=5) == [("maxCount", "maximum 4")]
    assert _check({"maxCount": 5}).unchecked == ["maxCount: not in the vendored spec"]


def test_a_flattened_container_that_is_not_vendored_leaves_the_next_properties_checked(specs: Path) -> None:
    definitions = {
        "Thing": {
            "type": "object",
            "properties": {
                "properties": {
                    "x-ms-client-flatten": True,
                    "$ref": "missing.json#/definitions/ThingProperties",
                },
                "size": {"type": "integer", "minimum": 1},
            },
        }
    }
    _write(specs, definitions)
    inputs = {"azureApiVersion": VERSION, "thingName": "t", "size": 0}
    result = schema.check_resource(TOKEN, inputs)
    assert _found(result) == [("size", "minimum 1")]
    assert result.unchecked == ["properties: flattened missing.json#/definitions/ThingProperties"]


# --- enums and parameters ---


@pytest.mark.parametrize(
    ("meta", "closed"),
    [
        (None, True),  # no x-ms-enum: a closed enum
        # Azure/autorest Documentation/swagger-extensions.md, x-ms-enum: "modelAsString ... Default: false"
        ({"name": "Color"}, True),
        ({"name": "Color", "modelAsString": False}, True),
        ({"name": "Color", "modelAsString": True}, False),  # extensible: any string
    ],
)
def test_an_enum_is_closed_unless_model_as_string(specs: Path, meta: dict | None, closed: bool) -> None:
    color: dict[str, Any] = {"type": "string", "enum": ["Red", "Blue"]}
    if meta is not None:
        color["x-ms-enum"] = meta
    _write(specs, {"Thing": {"type": "object", "properties": {"color": color}}})
    assert _found(_check({"color": "Blue"})) == []
    assert _found(_check({"color": "Green"})) == ([("color", "one of Red, Blue")] if closed else [])


COMMON = "../../../../../common-types/resource-management/v5/types.json#/parameters/"
ROUTE = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/things/{thingName}"


def test_path_parameters_not_vendored_are_listed_and_the_clients_own_are_not(specs: Path) -> None:
    """subscriptionId and api-version are the client's (azure-native's Check skips them by name); another
    route parameter whose definition is not vendored is listed as not checked, and in the SDK shape it is a
    path input, not a body input."""
    parameters = [
        {"$ref": f"{COMMON}SubscriptionIdParameter"},
        {"$ref": f"{COMMON}ResourceGroupNameParameter"},
        {"$ref": f"{COMMON}ApiVersionParameter"},
        {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}},
        {"name": "thingName", "in": "path", "required": True, "type": "string", "maxLength": 5},
    ]
    _write(specs, LIMITS, route=ROUTE, parameters=parameters)
    inputs = {"azureApiVersion": VERSION, "resourceGroupName": "rg", "thingName": "toolong", "count": 9}
    result = schema.check_resource(TOKEN, inputs)
    # the path parameter after the body is still checked
    assert _found(result) == [("thingName", "maxLength 5"), ("count", "maximum 4")]
    assert result.unchecked == [
        "path parameter common-types/resource-management/v5/types.json#/parameters/ResourceGroupNameParameter"
    ]


def test_a_path_parameter_is_named_by_its_wire_name_in_a_request_and_its_sdk_name_in_the_inputs(
    specs: Path,
) -> None:
    parameters = [
        {"name": "Thing_Name", "in": "path", "required": True, "type": "string", "maxLength": 5},
        {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}},
    ]
    _write(specs, LIMITS, route="/things/{Thing_Name}", parameters=parameters)
    wire = schema.check_request(OPERATION, VERSION, {"Thing_Name": "toolong"}, {"count": 2})
    assert _found(wire) == [("Thing_Name", "maxLength 5")]
    sdk = schema.check_resource(TOKEN, {"azureApiVersion": VERSION, "thingName": "toolong", "count": 2})
    assert _found(sdk) == [("thingName", "maxLength 5")]


def _naming(operation: str) -> dict[str, Any]:
    """naming-rules.json: a rule on thingName for `operation` of the spec file."""
    rule = {"file": FILE, "operationId": operation, "parameter": "thingName", "pattern": "^[a-z]+$"}
    return {"naming-rules.json": {"rules": [rule | {"source": "learn.microsoft.com (test rule)"}]}}


def test_a_naming_rule_applies_to_its_operations_parameter(specs: Path) -> None:
    _write(specs, LIMITS, **_naming(OPERATION))
    bad = schema.check_request(OPERATION, VERSION, {"thingName": "Thing1"}, {})
    assert _found(bad) == [("thingName", "pattern ^[a-z]+$")]
    assert bad.failures[0].source == "learn.microsoft.com (test rule)"
    assert _found(schema.check_request(OPERATION, VERSION, {"thingName": "thing"}, {})) == []
    # an unknown name (first preview) is skipped as the provider skips unknowns; a missing one is missing
    unknown = UNKNOWN
    assert _found(schema.check_request(OPERATION, VERSION, {"thingName": unknown}, {})) == []
    assert _found(schema.check_request(OPERATION, VERSION, {}, {})) == [("thingName", "required")]


def test_a_naming_rule_of_another_operation_in_the_same_file_does_not_apply(specs: Path) -> None:
    _write(specs, LIMITS, **_naming("Things_Update"))
    assert _found(schema.check_request(OPERATION, VERSION, {"thingName": "Thing1"}, {})) == []


def test_a_request_body_that_is_not_an_object_is_refused() -> None:
    result = schema.check_request("Jobs_CreateOrUpdate", "2025-01-01-preview", {"id": "j"}, ["properties"])
    assert result.checked
    assert [(f.path, f.constraint, f.reason) for f in result.failures] == [
        ("(body)", "type object", "the request body is not a JSON object")
    ]


# --- the Diff metadata (azure-native gen: ForceNew path parameters, x-ms-identifiers of keyed arrays) ---

TREE = {
    "Thing": {
        "type": "object",
        "properties": {
            "owner": {"$ref": "missing.json#/definitions/Owner"},  # not vendored: skipped
            "tags": {
                "type": "array",
                "items": {"type": "string"},
                "x-ms-identifiers": [],
            },  # compared by index
            "rules": {
                "type": "array",
                "x-ms-identifiers": ["name"],
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "ports": {
                            "type": "array",
                            "x-ms-identifiers": ["port", "protocol"],
                            "items": {"$ref": "#/definitions/Port"},
                        },
                    },
                },
            },
            "root": {"$ref": "#/definitions/Node"},
            "shape": {"$ref": "#/definitions/Shape"},  # a union: the provider does not enter it
            "chain": {"$ref": "#/definitions/Link"},
        },
    },
    # a type recursive through an object property (no array between)
    "Link": {
        "type": "object",
        "properties": {
            "next": {"$ref": "#/definitions/Link"},
            "hops": {"type": "array", "x-ms-identifiers": ["id"], "items": {"$ref": "#/definitions/Hop"}},
        },
    },
    "Hop": {"type": "object", "properties": {"id": {"type": "string"}}},
    "Shape": {"type": "object", "discriminator": "kind", "properties": {"kind": {"type": "string"}}},
    "Port": {"type": "object", "properties": {"port": {"type": "integer"}, "protocol": {"type": "string"}}},
    # a recursive type: each node holds keyed children of its own type
    "Node": {
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "children": {
                "type": "array",
                "x-ms-identifiers": ["label"],
                "items": {"$ref": "#/definitions/Node"},
            },
        },
    },
}


def test_keyed_arrays_and_nested_inputs_at_every_level_and_a_recursive_type_ends(specs: Path) -> None:
    parameters = [
        {"$ref": f"{COMMON}ResourceGroupNameParameter"},  # not vendored: skipped, still a route parameter
        {"name": "thingName", "in": "path", "required": True, "type": "string"},
        {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}},
    ]
    _write(specs, TREE, route="/resourceGroups/{resourceGroupName}/things/{thingName}", parameters=parameters)
    meta = schema.metadata(TOKEN, VERSION)
    assert meta is not None
    assert meta.path_params == {"resourceGroupName", "thingName"}  # never the body parameter's name
    ids = meta.identifiers
    assert ids["rules"] == ("name",)
    assert ids["rules.ports"] == ("port", "protocol")  # inside the items of an array
    assert ids["root.children"] == ("label",)
    assert ids["root.children.children"] == ("label",)  # the recursion is followed, and it ends
    assert "tags" not in ids  # `x-ms-identifiers: []`: no keys, the array compares by index
    # the inputs of each top-level object input, `[].` for the elements of an array of objects
    assert ids["chain.hops"] == ids["chain.next.hops"] == ids["chain.next.next.hops"] == ("id",)
    assert meta.nested == {
        "rules[].": {"name", "ports"},
        "root.": {"label", "children"},
        "chain.": {"next", "hops"},
    }


def test_the_body_after_a_parameter_that_is_not_vendored_is_still_read(specs: Path) -> None:
    definitions = {
        "Thing": {
            "type": "object",
            "properties": {
                "zone": {"type": "string", "x-ms-mutability": ["create", "read"]},
                "tier": {"type": "string", "default": "Basic"},
            },
        }
    }
    parameters = [
        {"$ref": f"{COMMON}ResourceGroupNameParameter"},
        {"name": "body", "in": "body", "schema": {"$ref": "#/definitions/Thing"}},
    ]
    _write(
        specs,
        definitions,
        route="/resourceGroups/{resourceGroupName}/things/{thingName}",
        parameters=parameters,
    )
    meta = schema.metadata(TOKEN, VERSION)
    assert meta is not None
    assert (meta.create_only, meta.defaults) == ({"zone"}, {"tier": "Basic"})
    assert meta.path_params == {"resourceGroupName", "thingName"}


# --- the vendored specs ---

STORAGE = "azure-native:storage:StorageAccount"


def test_a_value_sent_as_a_secret_is_checked_as_its_plain_value() -> None:
    """The engine sends a secret as {SIG_KEY: SECRET_SIG, "value": ...} (pulumi sdk/go/common/resource/
    properties.go); azure-native's Check sees the plain value, so a secret account name of 2 characters fails
    storage.json's minLength 3."""
    inputs = {"azureApiVersion": "2024-01-01", "resourceGroupName": "rg", "location": "eastus"}
    secret = {SIG_KEY: SECRET_SIG, "value": "ab"}
    failures = schema.check_resource(STORAGE, inputs | {"accountName": secret}).failures
    assert [(f.path, f.constraint) for f in failures if f.path == "accountName"] == [
        ("accountName", "minLength 3")
    ]
    fine = {SIG_KEY: SECRET_SIG, "value": "stllm01"}
    assert [
        f
        for f in schema.check_resource(STORAGE, inputs | {"accountName": fine}).failures
        if f.path == "accountName"
    ] == []


def test_engine_keys_and_null_values_are_skipped_and_the_keys_after_them_checked() -> None:
    """Inputs the engine adds (`__`-prefixed, e.g. `__createBeforeDelete`) and null (unset) inputs are not
    the request's: neither fails nor is listed; the inputs after them are still checked."""
    inputs = {
        "azureApiVersion": "2024-01-01",
        "__createBeforeDelete": True,
        "notAStorageInput": None,
        "resourceGroupName": "rg",
        "accountName": "stllm01",
        "location": 5,  # a body input after them, of the wrong type
    }
    result = schema.check_resource(STORAGE, inputs)
    assert [(f.path, f.constraint) for f in result.failures if f.path == "location"] == [
        ("location", "type string")
    ]
    assert not [u for u in result.unchecked if "__createBeforeDelete" in u or "notAStorageInput" in u]


JOB = {
    "properties": {
        "jobType": "Command",
        "command": "python train.py",
        "environmentId": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/1",
        "limits": {"jobLimitsType": "Command", "timeout": "PT2H"},
    }
}


def test_a_command_jobs_limits_are_checked_as_command_job_limits() -> None:
    """mfe.json (2025-01-01-preview) has two definitions with x-ms-discriminator-value "Command": CommandJob
    (a JobBase) and CommandJobLimits (a JobLimits). A command job with a timeout, as azure-ai-ml sends
    `command(..., timeout=7200)`, passes: its limits are CommandJobLimits, not a second job."""
    result = schema.check_request("Jobs_CreateOrUpdate", "2025-01-01-preview", {"id": "j"}, JOB)
    assert result.checked and result.failures == []
    wrong = copy.deepcopy(JOB)
    wrong["properties"]["limits"]["jobLimitsType"] = "Batch"
    failures = schema.check_request("Jobs_CreateOrUpdate", "2025-01-01-preview", {"id": "j"}, wrong).failures
    assert [f.path for f in failures] == ["properties.limits.jobLimitsType"]
