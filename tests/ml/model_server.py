#!/usr/bin/env python3
"""A real model server for the ML_PREDICT tests (tests/ml): scikit-learn models trained at
start, served over HTTP/1.1 (keep-alive) on loopback.

  POST /predict          the iris classifier (LogisticRegression fitted on the iris data
                         set): a JSON object {sepal_length, sepal_width, petal_length,
                         petal_width} -> {"species": name, "class_id": i, "probability": p}
                         (p rounded to 4 digits); a JSON array of such objects -> an array
                         of predictions (the 'http' provider's max_batch_size > 1).
  POST /v1/embeddings    OpenAI-compatible: {"model", "input": [texts]} -> {"data":
                         [{"index", "embedding"}]}, the embedding a TF-IDF + TruncatedSVD
                         (4 components) fitted on a fixed corpus, rounded to 3 digits.
  POST /v1/chat/completions  OpenAI-compatible: the last user message's sentiment from a
                         TF-IDF + LogisticRegression fitted on a labelled corpus
                         ("positive" / "negative") as choices[0].message.content.
  POST /admin/fail       {"count": n, "status": s}: the next n model requests answer s.
  POST /admin/delay      {"ms": n}: every model request waits n ms first (requests in flight).
  GET  /admin/stats      {"requests": n, "rows": m}: model requests and rows served.

`--expect FILE` prints, instead of serving, the predictions of FILE's JSON lines (one
feature object each, or {"text": ...} for embeddings with --task embeddings), so the tests
compute their exact expected outputs with the same models.
"""
import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from sklearn.datasets import load_iris
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

FEATURES = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
CORPUS = [
    "stream processing with event time and watermarks",
    "checkpoints make state exactly once after a failure",
    "a model server answers predictions over http",
    "vector embeddings place similar texts close together",
    "keyed state lives in rocksdb or in memory",
    "sql queries run continuously over unbounded tables",
    "the iris data set has three species of flowers",
    "logistic regression predicts a class and its probability",
]
SENTIMENT = [
    ("great fast and reliable", "positive"), ("i love this product", "positive"),
    ("excellent support and quick answers", "positive"), ("works perfectly every time", "positive"),
    ("terrible slow and broken", "negative"), ("i hate the crashes", "negative"),
    ("awful support and no answers", "negative"), ("fails every single time", "negative"),
]


class Models:
    def __init__(self):
        iris = load_iris()
        self.species = list(iris.target_names)
        self.iris = LogisticRegression(max_iter=1000).fit(iris.data, iris.target)
        self.embed = make_pipeline(TfidfVectorizer(), TruncatedSVD(n_components=4, random_state=0)).fit(CORPUS)
        texts, labels = zip(*SENTIMENT)
        self.sentiment = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, labels)

    def predict(self, rows):
        x = np.array([[float(r[f]) for f in FEATURES] for r in rows])
        probs = self.iris.predict_proba(x)
        out = []
        for p in probs:
            i = int(np.argmax(p))
            out.append({"species": self.species[i], "class_id": i, "probability": round(float(p[i]), 4)})
        return out

    def embeddings(self, texts):
        vs = self.embed.transform(texts)
        return [[round(float(v), 3) + 0.0 for v in row] for row in vs]

    def chat(self, text):
        return str(self.sentiment.predict([text])[0])


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/admin/stats":
            with self.server.lock:
                self.reply(200, {"requests": self.server.requests, "rows": self.server.rows})
        else:
            self.reply(404, {"error": "not found"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")
        if self.path == "/admin/fail":
            with self.server.lock:
                self.server.fail_count = int(body["count"])
                self.server.fail_status = int(body.get("status", 503))
            return self.reply(200, {})
        if self.path == "/admin/delay":
            self.server.delay_ms = int(body["ms"])
            return self.reply(200, {})
        if self.server.delay_ms:
            time.sleep(self.server.delay_ms / 1000.0)
        with self.server.lock:
            if self.server.fail_count > 0:
                self.server.fail_count -= 1
                return self.reply(self.server.fail_status, {"error": "injected failure"})
            self.server.requests += 1
        m = self.server.models
        if self.path == "/predict":
            rows = body if isinstance(body, list) else [body]
            preds = m.predict(rows)
            self.count(len(rows))
            return self.reply(200, preds if isinstance(body, list) else preds[0])
        if self.path == "/v1/embeddings":
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            self.count(len(texts))
            data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(m.embeddings(texts))]
            return self.reply(200, {"object": "list", "data": data, "model": body.get("model", "")})
        if self.path == "/v1/chat/completions":
            user = [x["content"] for x in body["messages"] if x["role"] == "user"][-1]
            self.count(1)
            msg = {"role": "assistant", "content": m.chat(user)}
            return self.reply(200, {"object": "chat.completion", "choices": [{"index": 0, "message": msg}]})
        self.reply(404, {"error": "unknown path " + self.path})

    def count(self, rows):
        with self.server.lock:
            self.server.rows += rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--expect")
    ap.add_argument("--task", default="predict", choices=["predict", "embeddings", "chat"])
    args = ap.parse_args()
    models = Models()
    if args.expect:
        rows = [json.loads(line) for line in open(args.expect) if line.strip()]
        if args.task == "predict":
            out = models.predict(rows)
        elif args.task == "embeddings":
            out = [{"embedding": e} for e in models.embeddings([r["text"] for r in rows])]
        else:
            out = [{"content": models.chat(r["text"])} for r in rows]
        for o in out:
            print(json.dumps(o))
        return
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.models = models
    server.lock = threading.Lock()
    server.requests = server.rows = server.fail_count = 0
    server.fail_status = 503
    server.delay_ms = 0
    print("ready", server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
