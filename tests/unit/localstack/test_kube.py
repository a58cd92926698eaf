"""wait_established: a CRD counts as installed only once the API server reports it Established=True, and a CRD
read before the server wrote any condition (kubectl's jsonpath prints nothing, or kubectl fails) is waited for."""

from __future__ import annotations

import subprocess

import pytest

from fraudstream_localstack.kube import wait_established
from fraudstream_localstack.processes import NotReadyError


class ApiServer:
    """kubectl as wait_established sees it: each CRD answers its scripted Established values in turn, then the last."""

    def __init__(self, answers: dict[str, list[str | Exception]]) -> None:
        self.answers = answers
        self.reads: list[str] = []

    def __call__(self, *args: str) -> str:
        verb, resource, _, jsonpath = args
        assert verb == "get" and jsonpath.startswith("jsonpath=") and "Established" in jsonpath
        crd = resource.removeprefix("crd/")
        self.reads.append(crd)
        script = self.answers[crd]
        answer = script.pop(0) if len(script) > 1 else script[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_returns_once_every_crd_is_established_after_a_read_without_conditions() -> None:
    not_found = subprocess.CalledProcessError(1, "kubectl", stderr="NotFound")
    server = ApiServer({"a.example.io": ["", "False", "True"], "b.example.io": [not_found, "True"]})
    wait_established(server, ["a.example.io", "b.example.io"], timeout_s=10)
    a, b = "a.example.io", "b.example.io"
    assert server.reads == [a, a, a, b, a, b]


def test_a_crd_never_established_fails_with_the_crds_named() -> None:
    server = ApiServer({"a.example.io": ["True"], "b.example.io": ["False"]})
    with pytest.raises(NotReadyError, match=r"a\.example\.io, b\.example\.io Established"):
        wait_established(server, ["a.example.io", "b.example.io"], timeout_s=0.5)
