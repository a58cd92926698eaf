"""Local, real infrastructure for fraudstream: Kafka (KRaft), etcd + kube-apiserver, run as child processes.

Used by `make up`/`make run` and by the pytest fixtures, so that tests and developers run the same thing.
Binaries and jars come from `.cache/` (installed by `scripts/provision.sh`); nothing is downloaded here.
"""
