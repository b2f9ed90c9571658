"""The live-sync scenario of scripts/bench (`booksync watch`, <doc:LiveSync>): N books
with a change field, one watch running against the emulator through the counting
proxy, and

- save → emulator (starting a minute after the seeding push, as editing does): the editor's save (a temporary file renamed over the record file)
  until a client polling the emulator every 20 ms (one kept-alive connection) sees the new content, over SAVES
  saves; median and 95th percentile against the 1 s target;
- app → file: a document written over REST (stamped as an app stamps it) until the
  file holds it, over 20 writes, against the poll interval + 1 s;
- an idle stretch (nothing written for IDLE seconds, after the minute in which the
  last writes are still read back): the billed reads the proxy counted, per hour,
  against the estimate the watch printed at start (README);
- the watch's peak RSS (from /proc while it runs).
"""
import http.client
import json
import os
import signal
import statistics
import subprocess
import time

import harness.process
from harness.booksync import make_collection
from harness.emulator import Client, Error

from .common import peak_rss_kb, run

POLL_SECONDS = 1
APP_WRITES = 20


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


class WatchScenarios:
    """Mixin of the Bench class (__main__.py)."""

    @staticmethod
    def document_title(client, doc_id):
        """The document's title, read over the client's one kept-alive connection: a
        client watching the emulator every 20 ms must not itself load it (a new
        connection every 5 ms slowed the emulator's answers to the watch)."""
        try:
            document = client.get("books/" + doc_id)
        except (OSError, http.client.HTTPException, Error):
            return None
        return (document or {}).get("fields", {}).get("title", {}).get("stringValue")

    @staticmethod
    def app_write(client, doc_id, title):
        """An app's write of the document, stamped with the server's time as the convention asks."""
        fields = {"id": {"stringValue": doc_id}, "title": {"stringValue": title}, "author": {"stringValue": "A"},
                  "genre": {"stringValue": "g"}}
        client.commit([{"update": {"name": client.name("books/" + doc_id), "fields": fields},
                        "updateTransforms": [{"fieldPath": "updatedAt", "setToServerValue": "REQUEST_TIME"}]}])

    @staticmethod
    def save(directory, doc_id, title):
        path = os.path.join(directory, doc_id + ".json")
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        record["title"] = title
        with open(path + ".tmp~", "w", encoding="utf-8") as f:
            json.dump(record, f, ensure_ascii=False, indent=2)
            f.write("\n")
        os.replace(path + ".tmp~", path)

    @staticmethod
    def file_title(directory, doc_id):
        try:
            with open(os.path.join(directory, doc_id + ".json"), encoding="utf-8") as f:
                return json.load(f).get("title")
        except (OSError, ValueError):
            return None

    def wait_for(self, what, condition, timeout=30.0, step=0.005):
        deadline = time.perf_counter() + timeout
        while not condition():
            if time.perf_counter() > deadline:
                raise SystemExit("bench: watch: timed out waiting until %s" % what)
            time.sleep(step)
        return time.perf_counter()

    def watch(self, records, saves, idle_seconds):
        directory = self.fresh(os.path.join(self.work, "watch-%d" % records))
        self.log("watch %d: generating and pushing %d books" % (records, records))
        make_collection(directory, records, 3)
        project = self.project("watch")
        self.init(directory, project, change_field="updatedAt")
        run(self.bs(directory, "-q", "push"), env=self.remote_env)
        # Through the proxy from the start: the base is the proxy's target for this whole run.
        self.retarget(directory, self.host, self.proxy.host)
        env = dict(self.proxied_env(), BOOKSYNC_PROGRESS="none")
        out_path = directory + ".watch.jsonl"
        with open(out_path, "w") as out, open(out_path + ".err", "w") as err:
            process = subprocess.Popen(self.bs(directory, "watch", "--interval", str(POLL_SECONDS), "--json"), env=env,
                                       stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        peak = 0
        watcher, app_client = Client(self.host, project, timeout=30), Client(self.host, project, timeout=120)
        try:
            start_line = {}

            def started():
                with open(out_path) as f:
                    for line in f:
                        if '"start"' in line:
                            start_line.update(json.loads(line))
                            return True
                if process.poll() is not None:
                    raise SystemExit("bench: watch exited: %s" % open(out_path + ".err").read()[-2000:])
                return False
            self.wait_for("the watch starts", started, timeout=120, step=0.05)
            # The seeding push wrote every document a moment ago: for a minute the change
            # mark's margin returns them to every poll (the watch then pauses its polls, and
            # a save would wait for a 10,000-document query). Editing starts after that.
            time.sleep(65)
            ids = sorted(n[:-5] for n in os.listdir(directory) if n.endswith(".json"))[:50]

            self.log("watch %d: %d saves, each timed until the emulator has it" % (records, saves))
            latencies = []
            for i in range(saves):
                doc_id = ids[i % len(ids)]
                title = "save %d" % i
                began = time.perf_counter()
                self.save(directory, doc_id, title)
                seen = self.wait_for("save %d is on the emulator" % i,
                                     lambda: self.document_title(watcher, doc_id) == title, step=0.02)
                latencies.append(seen - began)
                peak = max(peak, peak_rss_kb(process.pid) or 0)
                time.sleep(0.3)
            median = statistics.median(latencies)
            p95 = percentile(latencies, 0.95)
            self.target("watch: a save reaches the emulator ≤ 1 s (median and p95 of %d, %d records)" % (saves, records),
                        "median %.2f s, p95 %.2f s" % (median, p95), median <= 1 and p95 <= 1)

            self.log("watch %d: %d app writes, each timed until its file has it" % (records, APP_WRITES))
            app = []
            for i in range(APP_WRITES):
                doc_id = ids[-1 - (i % 10)]
                title = "app %d" % i
                began = time.perf_counter()
                self.app_write(app_client, doc_id, title)
                seen = self.wait_for("app write %d is in its file" % i, lambda: self.file_title(directory, doc_id) == title,
                                     timeout=60, step=0.01)
                app.append(seen - began)
            bound = POLL_SECONDS + 1
            self.target("watch: an app's write reaches the file ≤ poll interval + 1 s = %d s (median and p95 of %d)" % (bound, APP_WRITES),
                        "median %.2f s, p95 %.2f s" % (statistics.median(app), percentile(app, 0.95)),
                        percentile(app, 0.95) <= bound)

            if idle_seconds:
                # Writes of the last minute are read back by every poll (the change mark's margin).
                self.log("watch %d: a minute for the last writes to leave the change mark's margin, then %d s idle"
                         % (records, idle_seconds))
                time.sleep(65)
                self.proxy.reset()
                time.sleep(idle_seconds)
                counts = self.proxy.counts()
                per_hour = counts["billed_reads"] * 3600.0 / idle_seconds
                estimate = start_line.get("estimatedReadsPerIdleHour") or 0
                self.target("watch: billed reads of an idle hour at --interval %d, %d documents, within 10%% of the %d the start line estimates"
                            % (POLL_SECONDS, records, estimate),
                            "%.0f (%d reads in %d s, %d requests)" % (per_hour, counts["billed_reads"], idle_seconds, counts["requests"]),
                            estimate > 0 and abs(per_hour - estimate) <= 0.1 * estimate)
            peak = max(peak, peak_rss_kb(process.pid) or 0)
            self.target("watch: peak RSS of a watch over %d records ≤ 150 MB" % records, "%.1f MB" % (peak / 1024.0),
                        0 < peak <= 150 * 1024)
        finally:
            harness.process.stop(process, 60, signal.SIGINT)
            watcher.close()
            app_client.close()
            self.retarget(directory, self.proxy.host, self.host)
        with open(out_path) as f:
            lines = [json.loads(line) for line in f if line.strip()]
        stop = lines[-1] if lines and lines[-1].get("type") == "stop" else None
        if stop:
            self.notes.append("The watch scenario's own summary: %d requests, %d billed reads, %d writes in %.0f s."
                              % (stop["requests"], stop["billedReads"], stop["writes"], stop["seconds"]))
