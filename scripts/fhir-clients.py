#!/usr/bin/env python3
"""Two FHIR clients from PyPI read a study through StudyStack's FHIR API, as a health system's
tools would: fhirclient (SMART on FHIR's Python client, whose models are R4 4.0.1 and refuse what
does not fit them) and fhirpy (search, paging through every page by its next links, _include).
Each gets its own token through SMART Backend Services, the assertion signed with PyJWT and
cryptography (scripts/smart-backend-client.py). The FHIR API's tests run it; docs/fhir.md shows
the same calls.

  fhir-clients.py BASE CLIENT_ID KEY_PEM KID ALG STUDY_FHIR_ID

Prints one JSON object: what each client read (counts, titles, versions), and exits 0; any
error (a refused token, a resource the models reject) ends it with a traceback and exit 1.
"""
import importlib.util
import json
import os
import sys

import requests
from fhirclient import client as smart_client
from fhirclient.models.consent import Consent
from fhirclient.models.observation import Observation
from fhirclient.models.patient import Patient
from fhirclient.models.questionnaire import Questionnaire
from fhirclient.models.questionnaireresponse import QuestionnaireResponse
from fhirclient.models.researchstudy import ResearchStudy
from fhirclient.models.researchsubject import ResearchSubject
from fhirpy import SyncFHIRClient


def backend_client():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "smart-backend-client.py")
    spec = importlib.util.spec_from_file_location("smart_backend_client", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def with_fhirclient(base, client_id, key_pem, kid, alg, study_id, token_url):
    """fhirclient's own backend-services flow: it reads the token endpoint from the server's
    CapabilityStatement and posts the client_credentials grant with our signed assertion."""
    assertion = backend_client().assertion(token_url, client_id, key_pem, kid, alg, {})
    smart = smart_client.FHIRClient(settings={
        "app_id": client_id, "api_base": base, "jwt_token": assertion, "scope": "system/*.rs",
    })
    smart.wants_patient = False  # a backend service: no patient launch context
    smart.prepare()
    smart.server.authorize()
    server = smart.server
    study = ResearchStudy.read(study_id, server)
    patients = list(Patient.where(struct={"_count": "1"}).perform_resources_iter(server))
    subjects = list(ResearchSubject.where(struct={"status": "on-study"}).perform_resources_iter(server))
    responses = []
    questionnaires = {}
    for patient in patients:
        for response in QuestionnaireResponse.where(struct={"subject": f"Patient/{patient.id}"}).perform_resources_iter(server):
            responses.append(response)
            url, version = response.questionnaire.split("|")
            if (url, version) not in questionnaires:
                found = list(Questionnaire.where(struct={"url": url, "version": version}).perform_resources_iter(server))
                questionnaires[(url, version)] = found
    # Consents a page of one at a time, and the kick counts as Observations, each read by the
    # client's R4 models.
    consents = list(Consent.where(struct={"_count": "1"}).perform_resources_iter(server))
    kicks = list(Observation.where(struct={"code": "fetalKickCounter"}).perform_resources_iter(server))
    linked = all(len(found) == 1 and {i.linkId for i in found[0].item or []} >= {i.linkId for i in r.item or []}
                 for r in responses for found in [questionnaires[tuple(r.questionnaire.split("|"))]])
    return {
        "study": study.title, "status": study.status,
        "patients": len(patients), "subjects": len(subjects), "responses": len(responses),
        "questionnaires": sum(len(found) for found in questionnaires.values()),
        "answersNameTheirQuestionnairesItems": linked,
        "consents": sorted(f"{c.status}:{c.provision.provision[0].type if c.provision.provision else 'none'}" for c in consents),
        "kicksCounted": [component.valueInteger for observation in kicks for component in observation.component or []
                         if component.code.coding[0].code == "fetalKickCounter.count"],
    }


def with_fhirpy(base, client_id, key_pem, kid, alg, token_url):
    """fhirpy with a token from the same flow: every page of a search, and _include."""
    reply = backend_client().request_token(token_url, client_id, key_pem, kid, alg, "system/*.rs", {})
    if reply["status"] != 200:
        raise SystemExit(f"token refused: {reply}")
    fhir = SyncFHIRClient(base, authorization=f"Bearer {reply['body']['access_token']}")
    patients = fhir.resources("Patient").limit(1).fetch_all()
    responses = fhir.resources("QuestionnaireResponse").include("QuestionnaireResponse", "subject").limit(1).fetch_raw()
    every_response = fhir.resources("QuestionnaireResponse").limit(1).fetch_all()
    questionnaires = fhir.resources("Questionnaire").search(status="active").fetch_all()
    observations = fhir.resources("Observation").include("Observation", "subject").fetch_raw()
    entries = responses.get("entry", [])
    return {
        "patients": len(patients), "patientIds": sorted(p.id for p in patients),
        "responses": len(every_response),
        "firstPage": [e["search"]["mode"] + ":" + e["resource"]["resourceType"] for e in entries],
        "activeQuestionnaires": len(questionnaires),
        "observationPage": [e["search"]["mode"] + ":" + e["resource"]["resourceType"] for e in observations.get("entry", [])],
    }


def main(base, client_id, key_pem, kid, alg, study_id):
    # A backend service finds the token endpoint by SMART's discovery document.
    configuration = requests.get(f"{base}/.well-known/smart-configuration", timeout=30).json()
    token_url = configuration["token_endpoint"]
    print(json.dumps({
        "fhirclient": with_fhirclient(base, client_id, key_pem, kid, alg, study_id, token_url),
        "fhirpy": with_fhirpy(base, client_id, key_pem, kid, alg, token_url),
    }))


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
