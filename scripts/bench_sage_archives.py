"""Sage result archives for make bench: ARCHIVES distinct archives of one run of `daily30` each, as
an older Sage client writes them (metadata.json, info.json, answers.json with the answers of
bench/response-30.json, and a motion-record file of 300 samples), one file per archive in FOLDER.
Each differs (its info.json's createdOn, its motion samples), so none is a replay of another."""
import io
import json
import random
import sys
import zipfile

folder, count = sys.argv[1], int(sys.argv[2])
results = json.load(open("bench/response-30.json"))["results"]
# answers.json as the iOS client writes it: each answer by its key, lists comma-joined.
answers = {r["key"]: ",".join(r["value"]) if isinstance(r["value"], list) else r["value"] for r in results}
assert len(answers) == 30
stamp = "2030-01-05T08:01:00.000-05:00"
metadata = {
    "appName": "Benchmark", "appVersion": "1.0 (1)", "deviceInfo": "iPhone15,2; iOS/17.1", "deviceTypeIdentifier": "iPhone15,2",
    "files": [
        {"filename": "answers.json", "timestamp": stamp, "contentType": "application/json"},
        {"filename": "motion.json", "timestamp": stamp, "contentType": "application/json", "identifier": "motion",
         "stepPath": "daily30/motion"},
    ],
}
rng = random.Random(20261126)
for index in range(count):
    info = {"files": [{"filename": "answers.json", "timestamp": stamp}, {"filename": "motion.json", "timestamp": stamp}],
            "dataFilename": "answers.json", "format": "v2_generic", "item": "daily30", "appName": "Benchmark",
            "appVersion": "1.0", "phoneInfo": "iPhone15,2", "createdOn": f"2030-01-05T08:01:{index % 60:02d}.{index:06d}-05:00"}
    motion = [{"sensorType": rng.choice(["accelerometer", "gyro", "magnetometer"]), "stepPath": "daily30/motion",
               "timestamp": n * 0.01, "uptime": 2900726.355 + n * 0.01,
               "x": round(rng.uniform(-1, 1), 6), "y": round(rng.uniform(-1, 1), 6), "z": round(rng.uniform(-1, 1), 6)}
              for n in range(300)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("metadata.json", json.dumps(metadata))
        archive.writestr("info.json", json.dumps(info))
        archive.writestr("answers.json", json.dumps(answers))
        archive.writestr("motion.json", json.dumps(motion))
    with open(f"{folder}/{index + 1}.zip", "wb") as out:
        out.write(buffer.getvalue())
