"""The driver JVM's options: connect-lite's first, the user's ``spark.driver.extraJavaOptions``
last, so that the user's win (HotSpot takes the last of a repeated option)."""

from __future__ import annotations

from connect_lite.pipeline.session_start import (
    DRIVER_JAVA_OPTIONS,
    JAVA_OPTIONS_KEY,
    driver_java_options,
    effective_conf,
)

OURS = " ".join(DRIVER_JAVA_OPTIONS)


def test_without_options_of_the_users_the_driver_gets_ours() -> None:
    assert driver_java_options(None) == OURS
    assert driver_java_options("  ") == OURS
    assert effective_conf({})[JAVA_OPTIONS_KEY] == OURS


def test_the_users_options_come_last_so_they_win() -> None:
    user = "-XX:MaxHeapFreeRatio=70 -Dfoo=bar"
    assert driver_java_options(user) == f"{OURS} {user}"
    assert effective_conf({JAVA_OPTIONS_KEY: user})[JAVA_OPTIONS_KEY] == f"{OURS} {user}"


def test_extra_options_go_between_ours_and_the_users() -> None:
    merged = driver_java_options("-Dx=1", ["-XX:SharedArchiveFile=/a.jsa"])
    assert merged == f"{OURS} -XX:SharedArchiveFile=/a.jsa -Dx=1"


def test_ours_are_hotspot_options_only() -> None:
    assert all(option.startswith("-XX:") for option in DRIVER_JAVA_OPTIONS)
    assert "-XX:G1PeriodicGCInterval=5000" in DRIVER_JAVA_OPTIONS
