#!/usr/bin/env python3
"""Validates FHIR resources, one JSON resource per line (NDJSON), as the FHIR API's tests need.

Each resource is read by fhir.resources' R4B models (FHIR 4.3.0: the maintained library has no
R4 4.0.1 models; the resources StudyStack serves are the same in both), which checks its
structure, cardinalities, types and value sets bound as required. The FHIRPath invariants
that library does not check are evaluated with fhirpathpy: those of FHIR R4's resources and
elements that StudyStack serves, as the specification's StructureDefinitions state them.

Usage: fhir-validate.py FILE.ndjson [...]   (or - for standard input)
Prints one line per failure (to standard error) and a summary "checked N resources, F failures"; exits 1 on any
failure, 2 when nothing was checked.
"""
import importlib
import json
import sys

from fhirpathpy import evaluate
from fhirpathpy.models import models

R4 = models["r4"]

# (resource type, path of the element the invariant is on or "" for the resource, key, expression)
INVARIANTS = [
    # DomainResource: every resource type served.
    ("*", "", "dom-2", "contained.contained.empty()"),
    ("*", "", "dom-4", "contained.meta.versionId.empty() and contained.meta.lastUpdated.empty()"),
    ("*", "", "dom-5", "contained.meta.security.empty()"),
    # Extension: an extension has a value or extensions, not both.
    ("*", "descendants().ofType(Extension)", "ext-1", "extension.exists() != value.exists()"),
    # Questionnaire (R4 4.0.1).
    ("Questionnaire", "", "que-2", "descendants().linkId.isDistinct()"),
    ("Questionnaire", "repeat(item)", "que-1",
     # The specification's trace() calls are left out: they only log.
     "(type='group' implies item.empty().not()) and (type='display' implies item.empty())"),
    ("Questionnaire", "repeat(item)", "que-3", "type!='display' or code.empty()"),
    ("Questionnaire", "repeat(item)", "que-4", "answerOption.empty() or answerValueSet.empty()"),
    ("Questionnaire", "repeat(item)", "que-5",
     "(type ='choice' or type = 'open-choice' or type = 'decimal' or type = 'integer' or type = 'date' or type = 'dateTime' "
     "or type = 'time' or type = 'string' or type = 'quantity') or (answerValueSet.empty() and answerOption.empty())"),
    ("Questionnaire", "repeat(item)", "que-6", "type!='display' or (required.empty() and repeats.empty())"),
    ("Questionnaire", "repeat(item).enableWhen", "que-7", "operator = 'exists' implies (answer is Boolean)"),
    ("Questionnaire", "repeat(item)", "que-8", "(type!='group' and type!='display') or initial.empty()"),
    ("Questionnaire", "repeat(item)", "que-9", "type!='display' or readOnly.empty()"),
    ("Questionnaire", "repeat(item)", "que-10",
     "(type in ('boolean' | 'decimal' | 'integer' | 'string' | 'text' | 'url' | 'open-choice')) or maxLength.empty()"),
    ("Questionnaire", "repeat(item)", "que-11", "answerOption.empty() or initial.empty()"),
    ("Questionnaire", "repeat(item)", "que-12", "enableWhen.count() > 2 implies enableBehavior.exists()"),
    ("Questionnaire", "repeat(item)", "que-13", "repeats=true or initial.count() <= 1"),
    # QuestionnaireResponse.
    ("QuestionnaireResponse", "repeat(item | answer.item)", "qrs-1", "(answer.exists() and item.exists()).not()"),
    ("QuestionnaireResponse", "", "qrs-2",
     "repeat(answer|item).select(item.where(answer.value.exists()).linkId.isDistinct()).allTrue()"),
    # Period: a start after its end is no period.
    # (The specification says hasValue(), which fhirpathpy lacks; empty() is the same here.)
    ("*", "descendants().ofType(Period)", "per-1", "start.empty() or end.empty() or (start <= end)"),
    # Observation (R4 4.0.1).
    ("Observation", "", "obs-6", "dataAbsentReason.empty() or value.empty()"),
    ("Observation", "", "obs-7", "value.empty() or component.code.where(coding.intersect(%resource.code.coding).exists()).empty()"),
    # Attachment: data needs its content type.
    ("*", "descendants().ofType(Attachment)", "att-1", "data.empty() or contentType.exists()"),
    # Consent (R4 4.0.1); the 'something' systems are the specification's own.
    ("Consent", "", "ppc-1", "policy.exists() or policyRule.exists()"),
    ("Consent", "", "ppc-2", "patient.exists() or scope.coding.where(system='something' and code='patient-privacy').exists().not()"),
    ("Consent", "", "ppc-3", "patient.exists() or scope.coding.where(system='something' and code='research').exists().not()"),
    ("Consent", "", "ppc-4", "patient.exists() or scope.coding.where(system='something' and code='adr').exists().not()"),
    ("Consent", "", "ppc-5", "patient.exists() or scope.coding.where(system='something' and code='treatment').exists().not()"),
    # Patient.
    ("Patient", "contact", "pat-1", "name.exists() or telecom.exists() or address.exists() or organization.exists()"),
    # Bundle.
    ("Bundle", "", "bdl-1", "total.empty() or (type = 'searchset') or (type = 'history')"),
    ("Bundle", "", "bdl-2", "entry.search.empty() or (type = 'searchset')"),
    ("Bundle", "", "bdl-3",
     "entry.all(request.exists() = (%resource.type = 'batch' or %resource.type = 'transaction' or %resource.type = 'history'))"),
    ("Bundle", "", "bdl-4",
     "entry.all(response.exists() = (%resource.type = 'batch-response' or %resource.type = 'transaction-response' "
     "or %resource.type = 'history'))"),
    ("Bundle", "", "bdl-7",
     "(type = 'history') or entry.where(fullUrl.exists()).select(fullUrl&resource.meta.versionId).isDistinct()"),
    ("Bundle", "entry", "bdl-5", "resource.exists() or request.exists() or response.exists()"),
    ("Bundle", "entry", "bdl-8", "fullUrl.contains('/_history/').not()"),
]


# Codes of the value sets R4 binds as required, for the elements StudyStack serves:
# fhir.resources checks a code's form, not whether the value set has it.
REQUIRED_CODES = [
    ("Questionnaire", "status", {"draft", "active", "retired", "unknown"}),
    ("Questionnaire", "repeat(item).type", {"group", "display", "boolean", "decimal", "integer", "date", "dateTime", "time",
                                            "string", "text", "url", "choice", "open-choice", "attachment", "reference",
                                            "quantity"}),
    ("Questionnaire", "repeat(item).enableWhen.operator", {"exists", "=", "!=", ">", "<", ">=", "<="}),
    ("Questionnaire", "repeat(item).enableBehavior", {"all", "any"}),
    ("QuestionnaireResponse", "status", {"in-progress", "completed", "amended", "entered-in-error", "stopped"}),
    ("ResearchStudy", "status", {"active", "administratively-completed", "approved", "closed-to-accrual",
                                 "closed-to-accrual-and-intervention", "completed", "disapproved", "in-review",
                                 "temporarily-closed-to-accrual", "temporarily-closed-to-accrual-and-intervention",
                                 "withdrawn"}),
    ("ResearchSubject", "status", {"candidate", "eligible", "follow-up", "ineligible", "not-registered", "off-study",
                                   "on-study", "on-study-intervention", "on-study-observation", "pending-on-study",
                                   "potential-candidate", "screening", "withdrawn"}),
    ("Patient", "identifier.use | telecom.use", {"usual", "official", "temp", "secondary", "old", "home", "work",
                                                 "mobile"}),
    ("Patient", "gender", {"male", "female", "other", "unknown"}),
    ("Observation", "status", {"registered", "preliminary", "final", "amended", "corrected", "cancelled",
                               "entered-in-error", "unknown"}),
    ("Consent", "status", {"draft", "proposed", "active", "rejected", "inactive", "entered-in-error"}),
    ("Consent", "repeat(provision).type", {"deny", "permit"}),
    ("Bundle", "type", {"document", "message", "transaction", "transaction-response", "batch", "batch-response",
                        "history", "searchset", "collection"}),
    ("Bundle", "entry.search.mode", {"match", "include", "outcome"}),
    ("CapabilityStatement", "status", {"draft", "active", "retired", "unknown"}),
    ("CapabilityStatement", "kind", {"instance", "capability", "requirements"}),
    ("CapabilityStatement", "rest.mode", {"client", "server"}),
    ("CapabilityStatement", "rest.resource.interaction.code", {"read", "vread", "update", "patch", "delete",
                                                                "history-instance", "history-type", "create",
                                                                "search-type"}),
    ("CapabilityStatement", "rest.resource.searchParam.type", {"number", "date", "string", "token", "reference",
                                                                "composite", "quantity", "uri", "special"}),
    ("OperationOutcome", "issue.severity", {"fatal", "error", "warning", "information"}),
    ("OperationOutcome", "issue.code", {"invalid", "structure", "required", "value", "invariant", "security", "login",
                                        "unknown", "expired", "forbidden", "suppressed", "processing", "not-supported",
                                        "duplicate", "multiple-matches", "not-found", "deleted", "too-long",
                                        "code-invalid", "extension", "too-costly", "business-rule", "conflict",
                                        "transient", "lock-error", "no-store", "exception", "timeout", "incomplete",
                                        "throttled", "informational"}),
]


def empty_elements(value, path="$"):
    """FHIR's JSON has no empty strings, arrays or objects, and no nulls (ele-1's counterpart)."""
    if value is None or value == "" or value == [] or value == {}:
        yield path
    elif isinstance(value, dict):
        for name, member in value.items():
            yield from empty_elements(member, f"{path}.{name}")
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield from empty_elements(member, f"{path}[{index}]")


def model_for(resource_type):
    module = importlib.import_module(f"fhir.resources.R4B.{resource_type.lower()}")
    return getattr(module, resource_type)


def check(resource):
    """The problems of one resource, as text; none when it is valid."""
    problems = []
    resource_type = resource.get("resourceType") if isinstance(resource, dict) else None
    if not resource_type:
        return ["not a resource: no resourceType"]
    problems += [f"empty or null element at {path}" for path in empty_elements(resource)]
    try:
        model_for(resource_type).model_validate(resource)
    except Exception as error:  # pydantic's ValidationError, or an unknown type
        problems.append(f"fhir.resources R4B: {error}".replace("\n", " | "))
    contained = [resource]
    if resource_type == "Bundle":
        contained += [entry["resource"] for entry in resource.get("entry", []) if "resource" in entry]
    for target in contained:
        kind = target.get("resourceType")
        for applies, context, key, expression in INVARIANTS:
            if applies not in ("*", kind):
                continue
            # Evaluated from the resource, so the model types every node (value[x], `is`).
            whole = f"({context}).all({expression})" if context else expression
            try:
                outcome = evaluate(target, whole, {"resource": target}, R4)
            except Exception as error:
                problems.append(f"{kind} {key}: could not be evaluated: {error}")
                continue
            if outcome and outcome != [True]:
                problems.append(f"{kind} {key} fails: {expression}")
        for applies, path, allowed in REQUIRED_CODES:
            if applies != kind:
                continue
            for code in evaluate(target, path, {}, R4):
                if code not in allowed:
                    problems.append(f"{kind}.{path} is '{code}', not a code of the value set R4 binds it to")
    return problems


def main(paths):
    checked = failures = 0
    by_type = {}
    for path in paths:
        stream = sys.stdin if path == "-" else open(path, encoding="utf-8")
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            resource = json.loads(line)
            checked += 1
            by_type[resource.get("resourceType")] = by_type.get(resource.get("resourceType"), 0) + 1
            for problem in check(resource):
                failures += 1
                print(f"{path}:{number}: {problem}", file=sys.stderr)
    kinds = ", ".join(f"{count} {kind}" for kind, count in sorted(by_type.items()))
    print(f"checked {checked} resources ({kinds}), {failures} failures")
    return 1 if failures else (2 if checked == 0 else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["-"]))
