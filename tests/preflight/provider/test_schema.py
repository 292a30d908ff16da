"""The REST-spec check (preflight/provider/schema.py): what it rejects, with azure-native Check's wording, and
what it lists as not checked, never passing it silently.

Two kinds of spec:
- small specs written here in the vendored specs' OpenAPI 2.0 / autorest form (swagger.io/specification/v2:
  `$ref`, `allOf`, `discriminator`, `readOnly`; autorest docs/extensions: `x-ms-discriminator-value`,
  defaulting to the definition's name; `x-ms-enum.modelAsString`, default false) for the shapes the vendored
  extracts do not hold: `$ref` chains, `allOf` with a parent that is not vendored, discriminated subtypes,
  read-only properties, limits at their edges, the two shapes (REST body and azure-native inputs), naming
  rules, and the Diff metadata (`schema.metadata`);
- the vendored specs (preflight/provider/azure_specs, azure-rest-api-specs extracts), each constraint broken
  one at a time in the checked inputs the engine gave prod's resources (tests/fixtures/provider/), the name
  limits of Microsoft Learn, and the REST bodies localml checks.

The reasons are the provider's (pulumi-azure-native provider/pkg/provider/provider.go `validateProperty`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from preflight.provider import schema
from preflight.wire import SECRET_SIG, SIG_KEY, UNKNOWN
from tests.preflight.provider import recorded

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


# --- name limits (Microsoft Learn resource-name-rules) ----------------------------------------------------
# learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules (and, for the compute name,
# how-to-create-attach-compute-cluster: "between 3 and 24 characters ... letters, digits and the - character
# ... start with a letter ... '-' must be followed by at least one letter"):
# - Microsoft.Storage/storageAccounts: 3-24, lowercase letters and numbers.
# - Microsoft.KeyVault/vaults: 3-24, alphanumerics and hyphens; start with a letter; end with a letter or
#   digit; no consecutive hyphens.
# - Microsoft.MachineLearningServices/workspaces: 3-33, alphanumerics, hyphens and underscores; start with an
#   alphanumeric.
# - Microsoft.ContainerRegistry/registries: 5-50, alphanumerics.
# - Microsoft.Authorization/locks: 1-90, can't use <>*%&:\?/+.

VAULT = "azure-native:keyvault:Vault"
COMPUTE = "azure-native:machinelearningservices:Compute"
WORKSPACE = "azure-native:machinelearningservices:Workspace"
REGISTRY = "azure-native:containerregistry:Registry"
LOCK = "azure-native:authorization:ManagementLockByScope"
NAME_OF = {
    STORAGE: "accountName",
    VAULT: "vaultName",
    COMPUTE: "computeName",
    WORKSPACE: "workspaceName",
    REGISTRY: "registryName",
    LOCK: "lockName",
}


def _name_failures(typ: str, name: str) -> list[schema.Failure]:
    inputs = recorded.inputs(typ)
    inputs[NAME_OF[typ]] = name
    return [f for f in schema.check_resource(typ, inputs).failures if f.path == NAME_OF[typ]]


NAME_CASES = [
    # (type, name, passes)
    (STORAGE, "abc", True),
    (STORAGE, "ab", False),
    (STORAGE, "a" * 24, True),
    (STORAGE, "a" * 25, False),
    (STORAGE, "st0train9", True),
    (STORAGE, "stTrain", False),  # uppercase
    (STORAGE, "st-train", False),  # hyphen
    (VAULT, "kva", True),
    (VAULT, "kv", False),
    (VAULT, "k" * 24, True),
    (VAULT, "k" * 25, False),
    (VAULT, "kv-train-01", True),
    (VAULT, "1kv", False),  # starts with a digit
    (VAULT, "kv-", False),  # ends with a hyphen
    (VAULT, "kv--train", False),  # consecutive hyphens
    (VAULT, "kv_train", False),
    (COMPUTE, "abc", True),
    (COMPUTE, "ab", False),
    (COMPUTE, "a" * 24, True),
    (COMPUTE, "a" * 25, False),
    (COMPUTE, "h100-x4", True),  # a letter after the last '-'
    (COMPUTE, "gpu-cluster-1", False),  # only digits after the last '-'
    (COMPUTE, "1gpu", False),  # starts with a digit
    (COMPUTE, "gpu_x", False),
    (WORKSPACE, "abc", True),
    (WORKSPACE, "ab", False),
    (WORKSPACE, "w" * 33, True),
    (WORKSPACE, "w" * 34, False),
    (WORKSPACE, "ws_llm-01", True),
    (WORKSPACE, "1ws", True),  # an alphanumeric start, digits included
    (WORKSPACE, "-ws", False),
    (WORKSPACE, "_ws", False),
    (WORKSPACE, "ws.llm", False),
    (REGISTRY, "acr01", True),
    (REGISTRY, "acr0", False),
    (REGISTRY, "r" * 50, True),
    (REGISTRY, "r" * 51, False),
    (REGISTRY, "acr-train", False),
    (LOCK, "x", True),
    (LOCK, "", False),
    (LOCK, "l" * 90, True),
    (LOCK, "l" * 91, False),
    (LOCK, "do not delete (prod)", True),
    *[(LOCK, f"lock{c}x", False) for c in "<>*%&:\\?/+"],
]


@pytest.mark.parametrize(
    ("typ", "name", "passes"),
    NAME_CASES,
    ids=[f"{t.rsplit(':', 1)[-1]}-{n[:12]!r}" for t, n, _ in NAME_CASES],
)
def test_name_limits(typ: str, name: str, passes: bool) -> None:
    got = _name_failures(typ, name)
    if passes:
        assert got == []
    else:
        assert got, f"{typ} {name!r} should be refused"
        prop = NAME_OF[typ]
        assert all(f.source for f in got)
        assert any(
            f.reason.startswith((f"'{prop}' does not match expression", f"'{prop}' is too")) for f in got
        ), got


def test_the_reason_says_how_long_the_name_is_and_the_limit() -> None:
    # azure-native Check's wording (provider.go validateProperty): too long (N): at most M characters
    (f,) = _name_failures(STORAGE, "a" * 25)
    assert f.reason == "'accountName' is too long (25): at most 24 characters allowed"
    (g,) = _name_failures(STORAGE, "ab")
    assert g.reason == "'accountName' is too short (2): at least 3 characters required"


# --- each vendored constraint, broken in prod's checked inputs --------------------------------------------

ROLE = "azure-native:authorization:RoleAssignment"
ENDPOINT = "azure-native:network:PrivateEndpoint"
DNS_GROUP = "azure-native:network:PrivateDnsZoneGroup"
DIAGNOSTICS = "azure-native:monitor:DiagnosticSetting"
GROUP = "azure-native:resources:ResourceGroup"
LOG = "azure-native:operationalinsights:Workspace"
INSIGHTS = "azure-native:applicationinsights:Component"

# (resource type, change to the prod inputs, failing path, constraint, provider-style reason fragment)
CASES: list[tuple[str, Callable[[dict[str, Any]], None], str, str, str]] = [
    (
        STORAGE,
        lambda i: i.update(accountName="st" + "a" * 23),
        "accountName",
        "maxLength 24",
        "'accountName' is too long (25): at most 24 characters allowed",
    ),
    (
        STORAGE,
        lambda i: i.update(accountName="stWsLlm"),
        "accountName",
        "pattern ^[a-z0-9]+$",
        "'accountName' does not match expression '^[a-z0-9]+$'",
    ),
    (
        VAULT,
        lambda i: i.update(vaultName="kv_ws"),
        "vaultName",
        "pattern ^[a-zA-Z0-9-]{3,24}$",
        "does not match expression",
    ),
    (
        VAULT,
        lambda i: i.update(vaultName="kv--ws"),
        "vaultName",
        "pattern ^[a-zA-Z](?!.*--)[a-zA-Z0-9-]*[a-zA-Z0-9]$",
        "does not match expression",
    ),
    (
        REGISTRY,
        lambda i: i.update(registryName="cr1"),
        "registryName",
        "minLength 5",
        "'registryName' is too short (3): at least 5 characters required",
    ),
    (
        LOG,
        lambda i: i.update(workspaceName="log-ws-"),
        "workspaceName",
        "pattern ^[A-Za-z0-9][A-Za-z0-9-]+[A-Za-z0-9]$",
        "does not match expression",
    ),
    (LOG, lambda i: i.update(sku={}), "sku.name", "required", "missing required property 'sku.name'"),
    (
        LOG,
        lambda i: i.update(retentionInDays=30.5),
        "retentionInDays",
        "integer",
        "'retentionInDays' must be an integer",
    ),
    (INSIGHTS, lambda i: i.pop("kind"), "kind", "required", "missing required property 'kind'"),
    (
        INSIGHTS,
        lambda i: i.update(resourceName="appi?x"),
        "resourceName",
        "pattern",
        "does not match expression",
    ),
    (LOCK, lambda i: i.pop("level"), "level", "required", "missing required property 'level'"),
    (LOCK, lambda i: i.update(lockName="lock/st"), "lockName", "pattern", "does not match expression"),
    (
        WORKSPACE,
        lambda i: i.update(workspaceName="-ws"),
        "workspaceName",
        "pattern ^[a-zA-Z0-9][a-zA-Z0-9_-]{2,32}$",
        "does not match expression",
    ),
    (
        COMPUTE,
        lambda i: i.update(computeName="cpu-cluster-1"),
        "computeName",
        "pattern",
        "does not match expression",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"]["scaleSettings"].pop("maxNodeCount"),
        "properties.properties.scaleSettings.maxNodeCount",
        "required",
        "missing required property",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"]["scaleSettings"].update(maxNodeCount=2.5),
        "properties.properties.scaleSettings.maxNodeCount",
        "integer",
        "must be an integer but got 2.500000",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"].update(vmSize=8),
        "properties.properties.vmSize",
        "type string",
        "'properties.properties.vmSize' should be of type 'string' but got a number",
    ),
    (
        COMPUTE,
        lambda i: i["properties"]["properties"].update(userAccountCredentials={"adminUserSshPublicKey": "k"}),
        "properties.properties.userAccountCredentials.adminUserName",
        "required",
        "missing required property",
    ),
    (
        COMPUTE,
        lambda i: i["properties"].update(computeType="AmlComputeV2"),
        "properties.computeType",
        "one of",
        "not one of the values the spec defines",
    ),
    (
        COMPUTE,
        lambda i: i["identity"].pop("type"),
        "identity.type",
        "required",
        "missing required property 'identity.type'",
    ),
    (
        ROLE,
        lambda i: i.pop("principalId"),
        "principalId",
        "required",
        "missing required property 'principalId'",
    ),
    (
        ROLE,
        lambda i: i.update(principalType=["Group"]),
        "principalType",
        "type string",
        "'principalType' should be of type 'string' but got an array",
    ),
    (
        ENDPOINT,
        lambda i: i["privateLinkServiceConnections"][0].update(groupIds="file"),
        "privateLinkServiceConnections[0].groupIds",
        "type array",
        "'privateLinkServiceConnections[0].groupIds' should be of type 'array' but got a string",
    ),
    (
        DNS_GROUP,
        lambda i: i["privateDnsZoneConfigs"][0].update(privateDnsZoneId=7),
        "privateDnsZoneConfigs[0].privateDnsZoneId",
        "type string",
        "should be of type 'string' but got a number",
    ),
    (
        DIAGNOSTICS,
        lambda i: i["logs"][0].pop("enabled"),
        "logs[0].enabled",
        "required",
        "missing required property 'logs[0].enabled'",
    ),
    (
        DIAGNOSTICS,
        lambda i: i["logs"][0].update(retentionPolicy={"enabled": True, "days": -1}),
        "logs[0].retentionPolicy.days",
        "minimum 0",
        "'logs[0].retentionPolicy.days' is too low",
    ),
    (GROUP, lambda i: i.pop("location"), "location", "required", "missing required property 'location'"),
    (
        GROUP,
        lambda i: i.update(resourceGroupName="rg/train"),
        "resourceGroupName",
        "pattern ^[-\\w\\._\\(\\)]+$",
        "does not match expression",
    ),
    (STORAGE, lambda i: i.pop("kind"), "kind", "required", "missing required property 'kind'"),
    (
        STORAGE,
        lambda i: i.update(accessTier="Archive"),
        "accessTier",
        "one of Hot, Cool, Premium, Cold",
        "'accessTier' is 'Archive', not one of Hot, Cool, Premium, Cold",
    ),
    (
        VAULT,
        lambda i: i["properties"]["sku"].update(name="gold"),
        "properties.sku.name",
        "one of standard, premium",
        "'properties.sku.name' is 'gold', not one of standard, premium",
    ),
    (
        VAULT,
        lambda i: i["properties"].pop("tenantId"),
        "properties.tenantId",
        "required",
        "missing required property 'properties.tenantId'",
    ),
    (REGISTRY, lambda i: i.pop("sku"), "sku", "required", "missing required property 'sku'"),
    (
        REGISTRY,
        lambda i: i.update(networkRuleSet={"ipRules": []}),
        "networkRuleSet.defaultAction",
        "required",
        "missing required property 'networkRuleSet.defaultAction'",
    ),
    (
        WORKSPACE,
        lambda i: i["sku"].update(tier="Gold"),
        "sku.tier",
        "one of Free, Basic, Standard, Premium",
        "'sku.tier' is 'Gold', not one of Free, Basic, Standard, Premium",
    ),
    (
        WORKSPACE,
        lambda i: i["managedNetwork"].update(outboundRules={"pypi": {"category": "UserDefined"}}),
        "managedNetwork.outboundRules.pypi.type",
        "required",
        "missing required property 'managedNetwork.outboundRules.pypi.type'",
    ),
    (LOG, lambda i: i.pop("location"), "location", "required", "missing required property 'location'"),
    (
        INSIGHTS,
        lambda i: i.update(resourceGroupName="r" * 91),
        "resourceGroupName",
        "maxLength 90",
        "'resourceGroupName' is too long (91): at most 90 characters allowed",
    ),
]


@pytest.mark.parametrize(("typ", "change", "path", "constraint", "reason"), CASES)
def test_each_vendored_constraint_rejects(
    typ: str, change: Callable[[dict[str, Any]], None], path: str, constraint: str, reason: str
) -> None:
    inputs = recorded.inputs(typ)
    assert schema.check_resource(typ, inputs).failures == []  # SHOULD PASS: prod as declared
    change(inputs)
    failures = schema.check_resource(typ, inputs).failures
    assert {f.path for f in failures} == {path}
    matching = [f for f in failures if f.constraint.startswith(constraint)]
    assert matching, failures
    assert reason in matching[0].reason
    assert matching[0].source  # where the constraint is written


def test_unknown_values_are_skipped_like_the_provider() -> None:
    """First preview: a Compute's workspaceName is the engine's unknown sentinel; Check skips it, while a
    known value there is checked."""
    inputs = recorded.inputs(COMPUTE)
    assert [f.path for f in schema.check_resource(COMPUTE, inputs | {"workspaceName": "-ws"}).failures] == [
        "workspaceName"
    ]
    assert schema.check_resource(COMPUTE, inputs | {"workspaceName": UNKNOWN}).failures == []


def test_an_api_version_without_a_vendored_spec_is_not_checked() -> None:
    inputs = recorded.inputs(COMPUTE) | {"azureApiVersion": "2099-01-01", "computeName": "x"}
    result = schema.check_resource(COMPUTE, inputs)
    assert not result.checked and result.failures == []
    assert "API version 2099-01-01" in result.why and "vendored: 2025-12-01" in result.why


def test_a_type_without_a_vendored_spec_is_listed_as_not_checked() -> None:
    result = schema.check_resource("azure-native:resources:Deployment", recorded.inputs(GROUP))
    assert not result.checked and result.failures == []
    assert "no spec vendored for azure-native:resources:Deployment" in result.why


# --- REST bodies (doubles/localml/validation.py uses the same checker) --------------------------------------

WS_ID = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
    "Microsoft.MachineLearningServices/workspaces/ws"
)
# A command job as azure-ai-ml 1.35 sends `command(...)` with an input, an output and 2 PyTorch processes.
COMMAND_JOB = {
    "properties": {
        "jobType": "Command",
        "command": "python train.py --steps ${{inputs.steps}}",
        "environmentId": "azureml://registries/azureml/environments/acpt-pytorch-2.2-cuda12.1/versions/1",
        "codeId": f"{WS_ID}/codes/c/versions/1",
        "inputs": {"steps": {"jobInputType": "literal", "value": "10"}},
        "outputs": {"ckpt": {"jobOutputType": "uri_folder", "mode": "ReadWriteMount"}},
        "resources": {"instanceCount": 2, "shmSize": "2g"},
        "distribution": {"distributionType": "PyTorch", "processCountPerInstance": 2},
    }
}


def _job(change: Callable[[dict[str, Any]], None]) -> list[tuple[str, str]]:
    body = copy.deepcopy(COMMAND_JOB)
    change(body["properties"])
    result = schema.check_request("Jobs_CreateOrUpdate", "2025-01-01-preview", {"id": "j"}, body)
    assert result.checked
    return [(f.path, f.constraint) for f in result.failures]


def test_a_command_job_body_as_azure_ai_ml_sends_it_passes() -> None:
    assert _job(lambda p: None) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda p: p.pop("environmentId"), [("properties.environmentId", "required")]),
        (
            lambda p: p.update(command=""),
            [("properties.command", "minLength 1"), ("properties.command", "pattern [a-zA-Z0-9_]")],
        ),
        (
            lambda p: p.update(jobType="Batch"),
            [("properties.jobType", "one of AutoML, Command, Sweep, Pipeline, Spark, FineTuning")],
        ),
        (
            lambda p: p["outputs"]["ckpt"].pop("jobOutputType"),
            [("properties.outputs.ckpt.jobOutputType", "required")],
        ),
        (
            lambda p: p["resources"].update(shmSize="lots"),
            [("properties.resources.shmSize", "pattern \\d+[bBkKmMgG]")],
        ),
        (lambda p: p.update(experimentName=7), [("properties.experimentName", "type string")]),
    ],
)
def test_job_bodies_the_spec_rejects(change: Callable[[dict[str, Any]], None], expected: list) -> None:
    assert _job(change) == expected


def test_request_at_an_api_version_with_no_extract_is_not_checked() -> None:
    result = schema.check_request("Jobs_CreateOrUpdate", "2023-04-01-preview", {}, {"properties": {}})
    assert not result.checked and result.failures == []
    assert "2023-04-01-preview" in result.why


def test_the_400_is_the_arm_error_envelope() -> None:
    from doubles.localml.validation import MESSAGE, answer

    params = {"name": "c", "version": "1"}
    result = schema.check_request("CodeVersions_CreateOrUpdate", "2023-04-01", params, {"name": "1"})
    reply = answer(result)
    assert reply.status == 400
    assert reply.body == {
        "error": {
            "code": "UserError",
            "message": MESSAGE,
            "target": "properties",
            "details": [
                {
                    "code": "UserError",
                    "message": "missing required property 'properties' (constraint required)",
                    "target": "properties",
                }
            ],
        }
    }


def test_a_compute_put_needs_its_resource_group_path_parameter() -> None:
    """Compute_CreateOrUpdate's route takes common-types v3 ResourceGroupNameParameter (vendored, with its
    pattern): checked without it, the request misses a required path parameter, so localml passes its `{rg}`
    route parameter (doubles/localml/computes.py); with it, the AmlCompute body azure-native sends passes."""
    inputs = recorded.inputs(COMPUTE)
    body = {"location": inputs["location"], "properties": inputs["properties"]}
    params = {"workspaceName": "ws-llm", "computeName": inputs["computeName"]}
    without = schema.check_request("Compute_CreateOrUpdate", "2025-12-01", params, body)
    assert [(f.path, f.constraint) for f in without.failures] == [("resourceGroupName", "required")]
    bad = schema.check_request(
        "Compute_CreateOrUpdate", "2025-12-01", params | {"resourceGroupName": "rg/x"}, body
    )
    assert [f.path for f in bad.failures] == ["resourceGroupName"]
    ok = schema.check_request(
        "Compute_CreateOrUpdate", "2025-12-01", params | {"resourceGroupName": "rg"}, body
    )
    assert ok.failures == [] and ok.checked
