"""The REST API of a real worker: every route of the standalone herder, with its error cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import connect_lite
from connect_lite.testing import EmbeddedConnect, Metrics, wait_for
from tests.integration.testkit import lines, sink_config, source_config, unique

pytestmark = pytest.mark.integration


def test_root_and_health(worker: EmbeddedConnect) -> None:
    root = worker.http.get("/")
    assert root.status == 200
    assert set(root.body) == {"version", "commit", "kafka_cluster_id"}
    assert root.body["kafka_cluster_id"]
    health = worker.http.get("/health")
    assert health.status == 200
    assert health.body == {
        "status": "healthy",
        "message": "Worker has completed startup and is ready to handle requests.",
    }


def test_file_pipeline_copies_a_file_through_kafka_and_counts_it(worker: EmbeddedConnect) -> None:
    src = worker.workdir / "in.txt"
    dst = worker.workdir / "out.txt"
    src.write_text("".join(f"line {i}\n" for i in range(500)))
    topic, source, sink = unique("files"), unique("file-source"), unique("file-sink")
    created = worker.http.post(
        "/connectors",
        {
            "name": source,
            "config": {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "file": str(src),
                "topic": topic,
            },
        },
    )
    assert created.status == 201, created.body
    put = worker.http.put(
        f"/connectors/{sink}/config",
        {"connector.class": "FileStreamSink", "file": str(dst), "topics": topic},
    )
    assert put.status == 201, put.body
    assert put.body["config"]["connector.class"] == "FileStreamSink"  # as written, as Kafka
    [task] = worker.http.get(f"/connectors/{source}/tasks").body
    assert task["config"]["task.class"] == "org.apache.kafka.connect.file.FileStreamSourceTask"
    wait_for(lambda: len(lines(dst)) == 500, 120, what="500 lines in the sink file")
    # The broker auto-created the topic with several partitions: order holds per partition only.
    assert sorted(lines(dst)) == sorted(lines(src))
    before = wait_for(lambda: counted(worker, source, sink, 500), 60, what="500 counted")
    assert_task_metrics(before, source, sink)
    assert_worker_metrics(worker, before, source, sink)

    with src.open("a") as more:
        more.write("one more\n")
    wait_for(lambda: "one more" in lines(dst), 60, what="the appended line")
    assert len(lines(dst)) == 501
    after = wait_for(lambda: counted(worker, source, sink, 501), 60, what="501 counted")
    for name, connector in (
        ("kafka_connect_source_task_metrics_source_record_poll_total", source),
        ("kafka_connect_sink_task_metrics_sink_record_read_total", sink),
    ):
        task = {"connector": connector, "task": "0"}
        assert after.value(name, **task) > before.value(name, **task)


SOURCE_TASK = "kafka_connect_source_task_metrics_"
SINK_TASK = "kafka_connect_sink_task_metrics_"
COMMITS = "kafka_connect_connector_task_metrics_offset_commit_"
TASK_ERRORS = [
    "total_record_failures",
    "total_record_errors",
    "total_records_skipped",
    "total_retries",
    "total_errors_logged",
    "deadletterqueue_produce_requests",
    "deadletterqueue_produce_failures",
    "last_error_timestamp",
]


def counted(worker: EmbeddedConnect, source: str, sink: str, n: int) -> Metrics | None:
    """A scrape once both tasks counted ``n`` records in and out and committed offsets."""
    metrics = worker.metrics()
    src, snk = {"connector": source, "task": "0"}, {"connector": sink, "task": "0"}
    done = (
        metrics.find(SOURCE_TASK + "source_record_poll_total", **src)
        and metrics.value(SOURCE_TASK + "source_record_poll_total", **src) >= n
        and metrics.value(SOURCE_TASK + "source_record_write_total", **src) >= n
        and metrics.value(SINK_TASK + "sink_record_read_total", **snk) >= n
        and metrics.value(SINK_TASK + "sink_record_send_total", **snk) >= n
        and metrics.value(COMMITS + "success_total", **src) > 0
        and metrics.value(COMMITS + "success_total", **snk) > 0
    )
    return metrics if done else None


def assert_task_metrics(metrics: Metrics, source: str, sink: str) -> None:
    for connector, group, batch in ((source, SOURCE_TASK, "poll"), (sink, SINK_TASK, "put")):
        task = {"connector": connector, "task": "0"}
        avg = metrics.value(f"{group}{batch}_batch_avg_time_ms", **task)
        assert 0 < avg <= metrics.value(f"{group}{batch}_batch_max_time_ms", **task)
        assert metrics.value(COMMITS + "failure_total", **task) == 0
        for name in TASK_ERRORS:  # present, and nothing failed
            assert metrics.value(f"kafka_connect_task_error_metrics_{name}", **task) == 0, name


def assert_worker_metrics(
    worker: EmbeddedConnect, metrics: Metrics, source: str, sink: str
) -> None:
    store = "kafka_connect_status_backing_store_status_update_"
    assert metrics.value(store + "success_total") > 0
    assert {store + "retry_total", store + "failure_total"} <= {n for n, _, _ in metrics.samples}
    plugin_classes = {p["class"] for p in worker.http.get("/connector-plugins").body}
    for connector, kind in ((source, "source"), (sink, "sink")):
        status = worker.client.status(connector)
        assert metrics.find("kafka_connect_connector_metrics_status", connector=connector) == [
            ({"connector": connector, "status": "running"}, 1.0)
        ]
        counts = "kafka_connect_connect_worker_metrics_connector_{}_task_count"
        assert metrics.value(counts.format("running"), connector=connector) == 1
        assert metrics.value(counts.format("paused"), connector=connector) == 0
        assert metrics.value(counts.format("failed"), connector=connector) == 0
        assert (
            metrics.value("kafka_connect_connector_metrics_active_topic_count", connector=connector)
            == 1
        )
        ((info, one),) = metrics.find("kafka_connect_connector_info", connector=connector)
        assert one == 1
        assert info["connector_class"] in plugin_classes
        file_stream = f"org.apache.kafka.connect.file.FileStream{kind.title()}"
        assert info["connector_class"] == file_stream + "Connector"
        assert info["connector_type"] == kind
        assert info["connector_version"] == status["connector"]["version"]
        ((task, _),) = metrics.find("kafka_connect_connector_task_info", connector=connector)
        assert task["task"] == "0"
        assert task["task_class"] == file_stream + "Task"
        assert task["task_version"] == status["tasks"][0]["version"]
        for converter, cls in (
            ("key", "StringConverter"),
            ("value", "StringConverter"),
            ("header", "SimpleHeaderConverter"),
        ):
            assert task[f"{converter}_converter_class"] == f"org.apache.kafka.connect.storage.{cls}"
            assert task[f"{converter}_converter_version"] == connect_lite.__version__


def test_create_shapes_and_lookups(worker: EmbeddedConnect) -> None:
    name = unique("src")
    created = worker.http.post(
        "/connectors", {"name": f"  {name} ", "config": source_config(unique("t"))}
    )
    assert created.status == 201
    assert created.headers["Location"].endswith(f"/connectors/{name}")
    assert created.body["name"] == name
    assert created.body["type"] == "source"
    assert created.body["config"]["name"] == name
    assert created.body["tasks"] == [{"connector": name, "task": 0}]
    assert name in worker.http.get("/connectors").body
    assert worker.http.get(f"/connectors/{name}").body["tasks"] == [{"connector": name, "task": 0}]
    assert worker.http.get(f"/connectors/{name}/config").body["connector.class"] == "ScriptedSource"
    tasks = worker.http.get(f"/connectors/{name}/tasks").body
    assert tasks[0]["id"] == {"connector": name, "task": 0}
    assert tasks[0]["config"]["task.class"] == "testkit.ScriptedSourceTask"
    status = worker.wait_running(name, tasks=1)
    assert status["type"] == "source"
    worker_id = worker.rest_url.removeprefix("http://")  # host:port of its REST listener
    assert worker_id.startswith("127.0.0.1:")
    assert status["connector"]["worker_id"] == worker_id
    assert status["connector"]["version"] == "1.0.0"
    task = worker.http.get(f"/connectors/{name}/tasks/0/status")
    assert task.status == 200
    assert task.body == {
        "id": 0,
        "state": "RUNNING",
        "worker_id": worker_id,
        "version": "1.0.0",
    }
    expanded = worker.http.get("/connectors?expand=status&expand=info").body[name]
    assert expanded["status"]["connector"]["state"] == "RUNNING"
    assert expanded["info"]["name"] == name
    assert set(worker.http.get("/connectors?expand=info").body[name]) == {"info"}


def test_create_errors(worker: EmbeddedConnect) -> None:
    name = unique("dup")
    assert (
        worker.http.post("/connectors", {"name": name, "config": source_config("t")}).status == 201
    )
    dup = worker.http.post("/connectors", {"name": name, "config": source_config("t")})
    assert (dup.status, dup.body) == (
        409,
        {"error_code": 409, "message": f"Connector {name} already exists"},
    )
    invalid = worker.http.post(
        "/connectors",
        {
            "name": unique("bad"),
            "config": {"connector.class": "ScriptedSource", "tasks.max": "0", "topic": "t"},
        },
    )
    assert invalid.status == 400
    assert invalid.body["message"] == (
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`"
    )
    unknown = worker.http.post(
        "/connectors", {"name": unique("x"), "config": {"connector.class": "NoSuchConnector"}}
    )
    assert unknown.status == 400
    assert unknown.body["message"].startswith(
        "Failed to find any class that implements Connector and which name matches NoSuchConnector"
    )
    mismatch = worker.http.post(
        "/connectors", {"name": "a", "config": {**source_config("t"), "name": "b"}}
    )
    assert mismatch.status == 400
    assert (
        mismatch.body["message"]
        == "Connector name configuration (b) doesn't match connector name in the URL (a)"
    )
    for bad in ("", "a/b", "bad\nname"):
        response = worker.http.post("/connectors", {"name": bad, "config": source_config("t")})
        assert response.status == 400, (bad, response.body)
    assert worker.http.request("POST", "/connectors", raw=b"{not json").status == 400
    null_value = worker.http.post(
        "/connectors", {"name": unique("n"), "config": {**source_config("t"), "topic": None}}
    )
    assert null_value.status == 400
    assert (
        "Null value can not be supplied as the configuration value." in null_value.body["message"]
    )
    state = worker.http.post(
        "/connectors", {"name": unique("s"), "config": source_config("t"), "initial_state": "BOGUS"}
    )
    assert state.status == 400
    assert name in worker.http.get("/connectors").body


def test_put_and_patch_config(worker: EmbeddedConnect) -> None:
    name = unique("cfg")
    first = worker.http.put(f"/connectors/{name}/config", source_config(unique("t")))
    assert first.status == 201 and first.headers["Location"].endswith(f"/connectors/{name}")
    second = worker.http.put(f"/connectors/{name}/config/", source_config("other"))
    assert second.status == 200
    assert worker.http.get(f"/connectors/{name}/config").body["topic"] == "other"
    patched = worker.http.patch(
        f"/connectors/{name}/config", {"topic": "patched", "max.records": None}
    )
    assert patched.status == 200 and patched.body["config"]["topic"] == "patched"
    assert worker.http.patch("/connectors/missing/config", {"a": "b"}).status == 404
    mismatch = worker.http.put(
        f"/connectors/{name}/config", {**source_config("t"), "name": "other"}
    )
    assert mismatch.status == 400
    worker.wait_running(name, tasks=1)


def test_pause_resume_stop(worker: EmbeddedConnect, tmp_path: Path) -> None:
    topic = unique("t")
    out = worker.workdir / f"{topic}.jsonl"
    source, sink = unique("src"), unique("sink")
    assert (
        worker.http.post(
            "/connectors", {"name": source, "config": source_config(topic, **{"max.records": "50"})}
        ).status
        == 201
    )
    assert (
        worker.http.post("/connectors", {"name": sink, "config": sink_config(topic, out)}).status
        == 201
    )
    wait_for(lambda: len(lines(out)) == 50, 120, what="50 records in the sink")
    assert worker.http.put(f"/connectors/{sink}/pause").status == 202
    paused = wait_for(
        lambda: (
            (s := worker.client.status(sink))["connector"]["state"] == "PAUSED"
            and [t["state"] for t in s["tasks"]] == ["PAUSED"]
            and s
        ),
        60,
        what="sink PAUSED",
    )
    assert paused["tasks"][0]["id"] == 0
    assert (
        worker.http.put(
            f"/connectors/{source}/config", source_config(topic, **{"max.records": "80"})
        ).status
        == 200
    )
    assert worker.http.put(f"/connectors/{sink}/resume").status == 202
    worker.wait_running(sink, tasks=1)
    wait_for(lambda: len(lines(out)) == 80, 120, what="80 records after resume")
    assert worker.http.put(f"/connectors/{source}/stop").status == 204
    assert worker.http.put(f"/connectors/{source}/stop").status == 204
    stopped = worker.client.status(source)
    assert stopped["connector"]["state"] == "STOPPED" and stopped["tasks"] == []
    assert worker.http.get(f"/connectors/{source}/tasks").body == []
    assert worker.http.get(f"/connectors/{source}").body["tasks"] == []
    assert worker.http.get(f"/connectors/{source}/config").status == 200
    assert worker.http.put(f"/connectors/{source}/resume").status == 202
    worker.wait_running(source, tasks=1)
    for verb in ("pause", "resume", "stop"):
        missing = worker.http.put(f"/connectors/missing/{verb}")
        assert (missing.status, missing.body["message"]) == (404, "Unknown connector missing")


def test_restart_variants(worker: EmbeddedConnect) -> None:
    name = unique("rst")
    assert (
        worker.http.post("/connectors", {"name": name, "config": source_config(unique("t"))}).status
        == 201
    )
    worker.wait_running(name, tasks=1)
    plain = worker.http.post(f"/connectors/{name}/restart")
    assert plain.status == 204 and plain.raw == b""
    worker.wait_running(name, tasks=1)
    plan = worker.http.post(f"/connectors/{name}/restart?includeTasks=TRUE")
    assert plan.status == 202
    assert plan.body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in plan.body["tasks"]] == ["RESTARTING"]
    worker.wait_running(name, tasks=1)
    only_failed = worker.http.post(f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
    assert only_failed.status == 202
    assert only_failed.body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in only_failed.body["tasks"]] == ["RUNNING"]
    assert worker.http.post(f"/connectors/{name}/tasks/0/restart").status == 204
    worker.wait_running(name, tasks=1)
    missing_task = worker.http.post(f"/connectors/{name}/tasks/7/restart")
    assert (missing_task.status, missing_task.body["message"]) == (404, f"Task {name}-7 not found")
    assert (
        worker.http.post("/connectors/missing/restart").body["message"]
        == "Connector missing not found"
    )
    assert (
        worker.http.post("/connectors/missing/restart?onlyFailed=true").body["message"]
        == "Unknown connector: missing"
    )


def test_create_of_a_connector_whose_start_fails_answers_kafkas_500(
    worker: EmbeddedConnect,
) -> None:
    """Kafka stores the config, fails the connector and answers the create with the error
    (connect-rest.md §1.3): 500 from WorkerConnector's transition callback."""
    name = unique("broken")
    config = source_config("t", **{"fail.on.start": "true"})
    created = worker.http.post("/connectors", {"name": name, "config": config})
    assert (created.status, created.body) == (
        500,
        {"error_code": 500, "message": f"Failed to transition connector {name} to state STARTED"},
    )


def test_failures_show_in_status_and_restart_only_failed(worker: EmbeddedConnect) -> None:
    broken = unique("broken")
    config = source_config("t", **{"fail.on.start": "true"})
    worker.http.post("/connectors", {"name": broken, "config": config})  # the answer: see above
    assert worker.http.get(f"/connectors/{broken}/config").body == {**config, "name": broken}
    status = wait_for(
        lambda: (s := worker.client.status(broken)) and s["connector"]["state"] == "FAILED" and s,
        60,
    )
    assert "scripted connector start failure" in status["connector"]["trace"]
    flaky = unique("flaky")
    assert (
        worker.http.post(
            "/connectors",
            {"name": flaky, "config": source_config(unique("t"), **{"task.fail.after": "30"})},
        ).status
        == 201
    )
    failed = wait_for(
        lambda: (
            (s := worker.client.status(flaky))["tasks"] and s["tasks"][0]["state"] == "FAILED" and s
        ),
        120,
    )
    assert "scripted task failure after 30 records" in failed["tasks"][0]["trace"]
    assert failed["connector"]["state"] == "RUNNING"
    plan = worker.http.post(f"/connectors/{flaky}/restart?includeTasks=true&onlyFailed=true").body
    assert plan["connector"]["state"] == "RUNNING"
    assert plan["tasks"][0]["state"] == "RESTARTING"


def test_too_many_tasks_fails_the_connector(worker: EmbeddedConnect) -> None:
    name = unique("many")
    worker.http.post(
        "/connectors",
        {
            "name": name,
            "config": {"connector.class": "TooManyTasks", "topic": "t", "tasks.max": "2"},
        },
    )
    status = wait_for(
        lambda: (s := worker.client.status(name)) and s["connector"]["state"] == "FAILED" and s, 60
    )
    assert (
        f"The connector {name} has generated 3 tasks, which is greater than 2"
        in status["connector"]["trace"]
    )


def test_sink_rewind_with_context_offset(worker: EmbeddedConnect) -> None:
    topic = unique("rw")
    out = worker.workdir / f"{topic}.jsonl"
    source = unique("src")
    assert (
        worker.http.post(
            "/connectors", {"name": source, "config": source_config(topic, **{"max.records": "20"})}
        ).status
        == 201
    )
    probe = worker.workdir / f"{topic}-probe.jsonl"
    assert (
        worker.http.post(
            "/connectors", {"name": unique("probe"), "config": sink_config(topic, probe)}
        ).status
        == 201
    )
    wait_for(lambda: len(lines(probe)) == 20, 120, what="20 records")
    sink = unique("rewinder")
    assert (
        worker.http.post(
            "/connectors", {"name": sink, "config": sink_config(topic, out, **{"rewind.to": "15"})}
        ).status
        == 201
    )

    wait_for(lambda: len(lines(out)) >= 5, 120, what="records after the rewind")
    rows = [json.loads(line) for line in lines(out)]
    assert sorted(r["offset"] for r in rows) == [15, 16, 17, 18, 19]
    assert [r["value"] for r in sorted(rows, key=lambda r: r["offset"])] == [
        f"value-{n}" for n in range(15, 20)
    ]


def test_delete(worker: EmbeddedConnect) -> None:
    name = unique("del")
    assert (
        worker.http.post("/connectors", {"name": name, "config": source_config(unique("t"))}).status
        == 201
    )
    worker.wait_running(name, tasks=1)
    deleted = worker.http.delete(f"/connectors/{name}")
    assert deleted.status == 204
    assert worker.http.get(f"/connectors/{name}").body == {
        "error_code": 404,
        "message": f"Connector {name} not found",
    }
    assert (
        worker.http.get(f"/connectors/{name}/status").body["message"]
        == f"No status found for connector {name}"
    )
    assert (
        worker.http.get(f"/connectors/{name}/tasks/0/status").body["message"]
        == f"No status found for task {name}-0"
    )
    assert name not in worker.http.get("/connectors").body
    assert worker.http.delete(f"/connectors/{name}").status == 404


def test_connector_plugins(worker: EmbeddedConnect) -> None:
    connectors = worker.http.get("/connector-plugins").body
    classes = {p["class"] for p in connectors}
    assert {
        "org.apache.kafka.connect.file.FileStreamSourceConnector",
        "org.apache.kafka.connect.file.FileStreamSinkConnector",
    } <= classes
    assert {p["type"] for p in connectors} == {"source", "sink"}
    everything = worker.http.get("/connector-plugins?connectorsOnly=false").body
    types = {p["type"] for p in everything}
    assert {"source", "sink", "converter", "header_converter"} <= types
    config = worker.http.get("/connector-plugins/FileStreamSource/config")
    assert config.status == 200
    assert {"file", "topic", "batch.size"} <= {k["name"] for k in config.body}
    assert worker.http.get("/connector-plugins/Nope/config").status == 404
    validate = worker.http.put(
        "/connector-plugins/FileStreamSourceConnector/config/validate",
        {"connector.class": "FileStreamSource", "name": "v", "topic": "t", "tasks.max": "x"},
    )
    assert validate.status == 200
    assert validate.body["name"] == "FileStreamSource"
    assert validate.body["error_count"] == 2
    by_name = {c["value"]["name"]: c for c in validate.body["configs"]}
    assert "Not a number of type INT" in by_name["tasks.max"]["value"]["errors"][0]
    mismatch = worker.http.put(
        "/connector-plugins/FileStreamSink/config/validate", {"connector.class": "FileStreamSource"}
    )
    assert mismatch.status == 400
    assert (
        mismatch.body["message"]
        == "Included connector type FileStreamSource does not match request type FileStreamSink"
    )


def test_http_details(worker: EmbeddedConnect) -> None:
    unknown = worker.http.get("/no/such/route")
    assert unknown.status == 404 and unknown.headers["Content-Type"].startswith("application/json")
    assert unknown.body == {"error_code": 404, "message": "HTTP 404 Not Found"}
    wrong = worker.http.request("DELETE", "/connector-plugins")
    assert wrong.status == 405 and wrong.body["error_code"] == 405
    assert worker.http.get("/connectors/").status == 200
    assert worker.http.get("/connectors/x/tasks/notanumber/status").status == 404
    loggers = worker.http.get("/admin/loggers").body
    assert "root" in loggers
    changed = worker.http.put("/admin/loggers/connect_lite.control.herder", {"level": "DEBUG"})
    assert changed.status == 200 and "connect_lite.control.herder" in changed.body
    assert worker.http.get("/admin/loggers/connect_lite.control.herder").body["level"] == "DEBUG"
    assert worker.http.put("/admin/loggers/x", {"level": "LOUD"}).status == 404


def test_transforms_and_predicates_run_in_the_batch_job(worker: EmbeddedConnect) -> None:
    topic = unique("tx")
    out = worker.workdir / f"{topic}.jsonl"
    commits = worker.workdir / f"{topic}.commits"
    source = source_config(
        topic,
        **{
            "max.records": "10",
            "commit.log": str(commits),
            "transforms": "dropOdd,up",
            "transforms.dropOdd.type": "DropAll",
            "transforms.dropOdd.predicate": "isEven",
            "transforms.dropOdd.negate": "true",
            "transforms.up.type": "testkit.UppercaseTransformation",
            "transforms.up.predicate": "isSmall",
            "predicates": "isEven,isSmall",
            "predicates.isEven.type": "ValueMatches",
            "predicates.isEven.pattern": r"value-\d*[02468]",
            "predicates.isSmall.type": "ValueMatchesPredicate",
            "predicates.isSmall.pattern": "value-[0-4]",
        },
    )
    assert (
        worker.http.post("/connectors", {"name": unique("tx-src"), "config": source}).status == 201
    )
    assert (
        worker.http.post(
            "/connectors", {"name": unique("tx-sink"), "config": sink_config(topic, out)}
        ).status
        == 201
    )
    wait_for(lambda: len(lines(out)) == 5, 120, what="the 5 even records")
    values = sorted(json.loads(line)["value"] for line in lines(out))
    assert values == ["VALUE-0", "VALUE-2", "VALUE-4", "value-6", "value-8"]
    wait_for(lambda: "commit" in lines(commits), 60, what="a commit() call")
    records = [line.split() for line in lines(commits) if line.startswith("record ")]
    filtered = sorted(r[1] for r in records if r[2] == "filtered")
    assert filtered == ["value-1", "value-3", "value-5", "value-7", "value-9"]
    sent = [r for r in records if r[2] != "filtered"]
    assert len(sent) == 5 and all(r[2].startswith(f"{topic}/0/") for r in sent)


def test_rewind_requested_in_put_replays_without_gaps(worker: EmbeddedConnect) -> None:
    topic = unique("replay")
    out = worker.workdir / f"{topic}.jsonl"
    source = source_config(topic, **{"max.records": "3000"})
    assert worker.http.post("/connectors", {"name": unique("src"), "config": source}).status == 201
    sink = sink_config(topic, out, **{"replay.once.at": "1000"})
    assert (
        worker.http.post("/connectors", {"name": unique("replayer"), "config": sink}).status == 201
    )

    def offsets() -> list[int]:
        return [json.loads(line)["offset"] for line in lines(out)]

    def replayed() -> bool:  # the replay from 0 has reached the last record
        seen = offsets()
        return seen.count(0) >= 2 and seen[-1] == 2999 and seen.index(0, 1) < len(seen)

    wait_for(replayed, 120, what="the replay from offset 0 to finish")
    seen = offsets()
    first_pass = seen[: seen.index(0, 1)]
    assert first_pass == list(range(len(first_pass))) and first_pass[-1] >= 1000
    # The replay reads everything from 0 again, in order: nothing skipped, nothing extra.
    assert seen[len(first_pass) :] == list(range(3000))
