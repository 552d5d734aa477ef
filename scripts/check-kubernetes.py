"""Checks deploy/kubernetes/ without a cluster (scripts/check-deploy.sh runs it in make test):

- every manifest against the Kubernetes API's schemas, strictly (kubernetes-validate; the
  operator's own kinds, CloudNativePG's and Kustomization, have no schema there and are named);
- the production overlay rendered with `kubectl kustomize` when kubectl is installed, and the
  result validated the same way (secrets from the example files);
- each Deployment's environment, with its Secret's keys (the overlay's example file) and its
  ConfigMap keys: every variable is one the service reads (a setting declared in its Swift
  sources), and every variable a deployment must set is set.

Usage: check-kubernetes.py KUBERNETES_VALIDATE
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
K8S = os.path.join(ROOT, "deploy", "kubernetes")
VERSION = "1.30.0"
validator = sys.argv[1]

# The Swift sources that declare each executable's settings (`Setting("dotted.key")`).
SOURCES = {
    "study-metadata": ["Shared/ServiceKit", "Services/StudyMetadata"],
    "registration": ["Shared/ServiceKit", "Services/Registration"],
    "response": ["Shared/ServiceKit", "Services/Response"],
    "console": ["Services/Console"],
}
# What the console reads through ServiceKit's keys rather than its own declarations.
CONSOLE_SHARED = {"LOG_LEVEL", "LOG_FORMAT"}
# What a deployment on Kubernetes must set: the secrets, the database, the peers' in-cluster
# addresses (the defaults are loopback), the listening address (the default is loopback), and
# the public addresses the defaults cannot know.
PEERS = {"HTTP_HOST", "HTTP_PORT", "STUDY_METADATA_URL", "REGISTRATION_URL", "RESPONSE_URL"}
REQUIRED = {
    "study-metadata": PEERS | {"DATABASE_URL", "INTERNAL_SIGNING_KEY", "INTERNAL_CALLER_KEYS", "SCHEMA_PROTOCOL_URL",
                               "SCHEMA_DATA_URL"},
    "registration": PEERS | {"DATABASE_URL", "INTERNAL_SIGNING_KEY", "INTERNAL_CALLER_KEYS", "STUDYSTACK_ENCRYPTION_KEY",
                             "CONSENT_DIRECTORY", "MAIL_TRANSPORT", "MAIL_FROM", "SMTP_HOST"},
    "response": PEERS | {"DATABASE_URL", "QUERY_DATABASE_URL", "INTERNAL_SIGNING_KEY", "INTERNAL_CALLER_KEYS",
                         "STUDYSTACK_ENCRYPTION_KEY"},
    "console": PEERS | {"CONSOLE_KEY", "CONSOLE_PUBLIC_URL"},
}

failures = []


def fail(message):
    failures.append(message)


def env_name(key):
    """swift-configuration's environment name of a dotted key: `schema.dataURL` is SCHEMA_DATA_URL."""
    return "_".join(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", part) for part in key.split(".")).upper()


def settings(service):
    names = set()
    for folder in SOURCES[service]:
        for path in glob.glob(os.path.join(ROOT, folder, "**", "*.swift"), recursive=True):
            names |= {env_name(key) for key in re.findall(r'Setting\("([A-Za-z.]+)"', open(path).read())}
    return names | (CONSOLE_SHARED if service == "console" else set())


def validate(paths, what):
    result = subprocess.run([validator, "--strict", "-k", VERSION, *paths], capture_output=True, text=True)
    for line in (result.stdout + result.stderr).splitlines():
        if line.startswith("WARN") and "Couldn't find schema for kind" in line:
            kind = re.search(r"kind (\w+) with api version (\S+)", line)
            if not kind or not (kind.group(2).startswith("postgresql.cnpg.io/") or kind.group(1) == "Kustomization"):
                fail(f"{what}: {line}")
        elif not line.startswith("INFO"):
            fail(f"{what}: {line}")
    if result.returncode != 0:
        fail(f"{what}: kubernetes-validate exited {result.returncode}")


def documents(path):
    with open(path) as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc]


# 1. Every manifest, strictly.
manifests = sorted(glob.glob(os.path.join(K8S, "**", "*.yaml"), recursive=True))
validate(manifests, "deploy/kubernetes")

# 2. The production overlay, rendered, when kubectl is here.
overlay = os.path.join(K8S, "overlays", "production")
if shutil.which("kubectl"):
    work = tempfile.mkdtemp()
    try:
        shutil.copytree(K8S, os.path.join(work, "kubernetes"))
        secrets = os.path.join(work, "kubernetes", "overlays", "production", "secrets")
        for example in glob.glob(os.path.join(secrets, "*.env.example")):
            shutil.copy(example, example[: -len(".example")])
        rendered = subprocess.run(["kubectl", "kustomize", os.path.join(work, "kubernetes", "overlays", "production")],
                                  capture_output=True, text=True)
        if rendered.returncode != 0:
            fail(f"kubectl kustomize overlays/production: {rendered.stderr.strip()}")
        else:
            out = os.path.join(work, "rendered.yaml")
            with open(out, "w") as stream:
                stream.write(rendered.stdout)
            validate([out], "overlays/production, rendered")
            kinds = [doc["kind"] for doc in yaml.safe_load_all(rendered.stdout) if doc]
            if kinds.count("Deployment") != 4 or kinds.count("Secret") != 4:
                fail(f"overlays/production renders {kinds.count('Deployment')} Deployments and {kinds.count('Secret')} Secrets")
    finally:
        shutil.rmtree(work)
    rendered_note = "rendered with kubectl kustomize"
else:
    rendered_note = "not rendered (no kubectl here)"

# 3. Each service's environment.
literals = {}
for folder in [os.path.join(K8S, "base"), overlay]:
    for generator in yaml.safe_load(open(os.path.join(folder, "kustomization.yaml"))).get("configMapGenerator", []):
        literals.setdefault(generator["name"], set()).update(line.split("=", 1)[0] for line in generator.get("literals", []))
for service in SOURCES:
    deployments = [doc for doc in documents(os.path.join(K8S, "base", f"{service}.yaml")) if doc["kind"] == "Deployment"]
    if len(deployments) != 1:
        fail(f"base/{service}.yaml has {len(deployments)} Deployments")
        continue
    container = deployments[0]["spec"]["template"]["spec"]["containers"][0]
    names = set()
    for variable in container.get("env", []):
        names.add(variable["name"])
        reference = variable.get("valueFrom", {}).get("configMapKeyRef")
        if reference and reference["key"] not in literals.get(reference["name"], set()):
            fail(f"{service}: {variable['name']} reads {reference['name']}/{reference['key']}, which the overlay does not make")
    for source in container.get("envFrom", []):
        secret = source["secretRef"]["name"]
        example = os.path.join(overlay, "secrets", f"{service}.env.example")
        if secret != f"{service}-secrets" or not os.path.exists(example):
            fail(f"{service}: its Secret {secret} has no example file secrets/{service}.env.example")
            continue
        names |= {line.split("=", 1)[0] for line in open(example) if re.match(r"^[A-Z_][A-Z0-9_]*=", line)}
    unknown = names - settings(service)
    if unknown:
        fail(f"{service}: sets {sorted(unknown)}, which it does not read")
    missing = REQUIRED[service] - names
    if missing:
        fail(f"{service}: does not set {sorted(missing)}")

# 4. The Ingresses route the public paths only: the console's pages, never an operator endpoint
# (ingress-nginx matches a regular expression path as `~* ^<path>`, case-insensitively).
public = {"console": ["/", "/signin", "/studies/DEMOSTUDY/overview", "/static/console.css", "/metricsreport"],
          "response": ["/mobileappstudy-processResponse.api", "/DEMOSTUDY/query-executeSql.api", "/schema/"]}
operator = ["/metrics", "/readyz", "/healthz", "/healthz/", "/METRICS"]
# The console serves no /internal or /admin paths; the services do, and they stay inside.
private = {"console": operator}
for path in [os.path.join(K8S, "base", "ingress.yaml"), os.path.join(overlay, "ingress-hosts.yaml")]:
    routes = {}
    for doc in documents(path):
        regex = doc["metadata"].get("annotations", {}).get("nginx.ingress.kubernetes.io/use-regex") == "true"
        for rule in doc["spec"]["rules"]:
            for entry in rule["http"]["paths"]:
                service = entry["backend"]["service"]["name"]
                pattern = entry["path"] if regex else re.escape(entry["path"])
                routes.setdefault(service, []).append(re.compile("^" + pattern, re.IGNORECASE))
    for service, paths in public.items():
        for request in paths:
            if not any(route.match(request) for route in routes.get(service, [])):
                fail(f"{os.path.relpath(path, K8S)}: {request} does not reach {service}")
    for service, patterns in routes.items():
        for request in private.get(service, operator + ["/internal/v1/studies", "/admin/v1/studies"]):
            if any(route.match(request) for route in patterns):
                fail(f"{os.path.relpath(path, K8S)}: {request} is routed to {service} from outside")

if failures:
    print("deploy/kubernetes:\n  " + "\n  ".join(failures), file=sys.stderr)
    sys.exit(1)
print(f"deploy/kubernetes: every manifest valid for Kubernetes {VERSION}; the overlay {rendered_note}; "
      "each service's environment is what it reads and sets what it must")
