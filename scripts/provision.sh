#!/usr/bin/env bash
# Installs fraudstream's local toolchain into the checkout, idempotently.
#   scripts/provision.sh [python|kafka|spark-jars|evaluator|k8s|all]...
# Everything lands under .cache/ (binaries, jars, stamps) and .venv/; versions come from versions.env only.
# A step whose stamp matches its pinned versions is skipped, so a second run costs seconds.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
set -a; . ./versions.env; set +a
CACHE="$ROOT/.cache"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
mkdir -p "$BIN" "$STAMPS" "$CACHE/build"

log() { printf '[provision] %s\n' "$*" >&2; }
die() { printf '[provision] ERROR: %s\n' "$*" >&2; exit 1; }

# done_if_stamped NAME KEY: true when step NAME already ran for exactly KEY.
stamped() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp() { printf '%s' "$2" >"$STAMPS/$1"; }

python_env() {
  local key
  key="$(sha256sum pyproject.toml | cut -c1-16)"
  if stamped python "$key" && [ -x .venv/bin/python ]; then return; fi
  log "python: creating .venv and installing pyproject.toml (pyspark is ~450 MB the first time)"
  local py
  py=$(command -v python3.11 || command -v python3) || die "python3 (>= $PYTHON_MIN) not found; install it and rerun 'make install'"
  [ -x .venv/bin/python ] || "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip \
    || die "pip upgrade failed (PyPI reachable?); rerun 'make install'"
  .venv/bin/python -m pip install -q -e '.[dev]' \
    || die "pip install -e .[dev] failed; the error above names the package; rerun 'make install'"
  stamp python "$key"
}

# maven_copy NAME OUTDIR GAV...: resolves the given artifacts and their runtime dependencies into OUTDIR.
# A GAV prefixed with '=' pins the version of a transitive dependency instead of adding one.
maven_copy() {
  local name=$1 out=$2; shift 2
  local dir="$CACHE/build/maven-$name" deps="" managed=""
  mkdir -p "$dir"
  for gav in "$@"; do
    IFS=: read -r g a v <<<"${gav#=}"
    local dep="<dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
    if [ "${gav:0:1}" = "=" ]; then managed+="$dep"; else deps+="$dep"; fi
  done
  cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>io.fraudstream.provision</groupId><artifactId>$name</artifactId><version>1</version><packaging>pom</packaging>
<dependencyManagement><dependencies>$managed</dependencies></dependencyManagement>
<dependencies>$deps</dependencies></project>
POM
  rm -rf "$out.tmp"
  mvn -q -B -s "$ROOT/scripts/maven-settings.xml" -f "$dir/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$out.tmp" \
    || die "Maven could not resolve $* (see the error above; Maven Central reachable?). Retry with 'make install'."
  rm -rf "$out"; mv "$out.tmp" "$out"
}

kafka() {
  local key="kafka-$KAFKA_VERSION-log4j-$LOG4J_VERSION"
  if stamped kafka "$key" && [ -d "$CACHE/kafka/libs" ]; then return; fi
  log "kafka: resolving org.apache.kafka:kafka_$SCALA_BINARY_VERSION:$KAFKA_VERSION and kafka-tools with Maven"
  maven_copy kafka "$CACHE/kafka/libs" \
    "org.apache.kafka:kafka_$SCALA_BINARY_VERSION:$KAFKA_VERSION" \
    "org.apache.kafka:kafka-tools:$KAFKA_VERSION" \
    "org.apache.logging.log4j:log4j-slf4j-impl:$LOG4J_VERSION"
  stamp kafka "$key"
}

spark_jars() {
  local key="spark-kafka-$SPARK_KAFKA_CONNECTOR_VERSION-$SPARK_KAFKA_TOKEN_PROVIDER_VERSION"
  if stamped spark-jars "$key" && [ -d "$CACHE/spark-jars" ]; then return; fi
  log "spark-jars: resolving spark-sql-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_CONNECTOR_VERSION with Maven"
  maven_copy spark-kafka "$CACHE/spark-jars" \
    "org.apache.spark:spark-sql-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_CONNECTOR_VERSION" \
    "=org.apache.spark:spark-token-provider-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_TOKEN_PROVIDER_VERSION"
  stamp spark-jars "$key"
}

# k8s: kube-apiserver and kubectl built from k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3, helm by go install.
k8s() {
  local key="k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION"
  if stamped k8s "$key" && [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/etcd" ] && [ -x "$BIN/kubectl" ] && [ -x "$BIN/helm" ]; then return; fi
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
  local dir="$CACHE/build/k8s-$KUBERNETES_VERSION"
  mkdir -p "$dir"
  log "k8s: building kube-apiserver and kubectl $KUBERNETES_VERSION from the Go module proxy (minutes, once)"
  local gomod
  gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p') \
    || die "go could not download k8s.io/kubernetes@$KUBERNETES_VERSION; retry with 'make install'"
  {
    echo "module fraudstream.local/k8sbuild"
    echo "go 1.24"
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    # Upstream replaces every staging module with ./staging/...; point each at its published tag instead.
    sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$KUBERNETES_STAGING_VERSION"'#p' "$gomod"
  } >"$dir/go.mod"
  grep -q '^replace k8s.io/api ' "$dir/go.mod" || die "no staging replaces found in $gomod"
  (cd "$dir" && go build -trimpath -o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver \
    && go build -trimpath -o "$BIN/kubectl" k8s.io/kubernetes/cmd/kubectl) \
    || die "building kube-apiserver/kubectl failed; retry with 'make install'"
  log "k8s: building etcd $ETCD_VERSION"
  local edir="$CACHE/build/etcd-$ETCD_VERSION"
  mkdir -p "$edir"
  printf 'module fraudstream.local/etcdbuild\ngo 1.24\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$edir/go.mod"
  (cd "$edir" && go build -trimpath -o "$BIN/etcd" go.etcd.io/etcd/server/v3) \
    || die "building etcd failed; retry with 'make install'"
  log "k8s: installing helm $HELM_VERSION"
  GOBIN="$BIN" GOFLAGS= go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    || die "go install helm.sh/helm/v3/cmd/helm@$HELM_VERSION failed; retry with 'make install'"
  stamp k8s "$key"
}

# ---- Kubernetes packaging (issue #6): `monitoring` and `monitoring-crds`, run by `make install` ----------------
# monitoring: promtool and the Prometheus server from Debian's `prometheus` package, for the chart's alert-rule and
# dashboard tests. The stamp records the installed package version. A Prometheus service the package may have
# started (on a machine running systemd) is stopped and disabled: the tests run their own server on a free port.
monitoring() {
  local have
  have=$(dpkg-query -W -f='${Version}' prometheus 2>/dev/null || true)
  if [ -n "$have" ] && stamped monitoring "prometheus-$have" && command -v promtool >/dev/null \
    && command -v prometheus >/dev/null; then return; fi
  if [ -z "$have" ] || ! command -v promtool >/dev/null; then
    command -v apt-get >/dev/null || die "monitoring: apt-get not found; install Debian's 'prometheus' package (promtool) and rerun 'make install'"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    log "monitoring: installing Debian's prometheus package (promtool and the server) with apt-get"
    $sudo apt-get update -qq || die "apt-get update failed; rerun 'make install'"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends prometheus >/dev/null \
      || die "apt-get install prometheus failed; rerun 'make install'"
    if command -v systemctl >/dev/null && systemctl is-active --quiet prometheus 2>/dev/null; then
      log "monitoring: stopping and disabling the package's own prometheus service"
      $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
    fi
    have=$(dpkg-query -W -f='${Version}' prometheus)
  fi
  stamp monitoring "prometheus-$have"
}

# monitoring-crds: the prometheus-operator CRD manifests (ServiceMonitor, PodMonitor, PrometheusRule, ...) from the
# Go module github.com/prometheus-operator/prometheus-operator, into .cache/monitoring-crds/.
monitoring_crds() {
  local key="prometheus-operator-$PROMETHEUS_OPERATOR_VERSION" out="$CACHE/monitoring-crds"
  if stamped monitoring-crds "$key" && [ -f "$out/monitoring.coreos.com_prometheusrules.yaml" ]; then return; fi
  log "monitoring-crds: downloading github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION"
  local dir
  dir=$(cd "$CACHE/build" && GOFLAGS=-mod=mod GOTOOLCHAIN=local \
    go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p') || true
  [ -n "$dir" ] && [ -d "$dir/example/prometheus-operator-crd" ] \
    || die "go could not download prometheus-operator@$PROMETHEUS_OPERATOR_VERSION; retry with 'make install'"
  rm -rf "$out.tmp"
  mkdir -p "$out.tmp"
  cp "$dir"/example/prometheus-operator-crd/*.yaml "$out.tmp/"
  chmod -R u+w "$out.tmp"
  rm -rf "$out"
  mv "$out.tmp" "$out"
  stamp monitoring-crds "$key"
}
# ---- end of issue #6 steps ----------------------------------------------------------------------------------------

# spark-repository: the jars the detector's Spark runs with, installed into the project's Maven repository
# (.cache/maven-repository) for the evaluator's Maven build to compile and test against (Maven Central has no Spark
# 4.3.0): every jar of the installed pyspark ($1), and the Kafka connector's jars that pyspark does not ship (as the
# detector's session adds them). Spark's modules keep their coordinates (org.apache.spark:spark-sql_2.13:4.3.0); every
# other jar becomes io.fraudstream.provided:<its file name>:<the release it came with>, since not all of them say
# theirs. The POM io.fraudstream.provided:spark-runtime:$SPARK_VERSION depends on all of them: the pom names it.
spark_repository() {
  local pyspark_jars=$1 repo="$CACHE/maven-repository" dir="$CACHE/build/maven-spark-repository" key
  key="spark-$SPARK_VERSION-$(cd "$pyspark_jars" && ls ./*.jar | sha256sum | cut -c1-16)"
  key+="-connector-$(cat "$STAMPS/spark-jars")-install-$MAVEN_INSTALL_PLUGIN_VERSION"
  local aggregate="$repo/io/fraudstream/provided/spark-runtime/$SPARK_VERSION/spark-runtime-$SPARK_VERSION.pom"
  if stamped spark-repository "$key" && [ -f "$aggregate" ]; then return; fi
  log "spark-repository: installing pyspark's and the Kafka connector's jars into .cache/maven-repository"
  local executions="" deps="" shipped=" " jar name artifact n=0
  # repository_jar GROUP ARTIFACT VERSION FILE: one install-file execution, and one dependency of the aggregate POM.
  repository_jar() {
    n=$((n + 1))
    executions+="<execution><id>jar-$n</id><phase>validate</phase><goals><goal>install-file</goal></goals>"
    executions+="<configuration><file>$4</file><groupId>$1</groupId><artifactId>$2</artifactId><version>$3</version>"
    executions+="<packaging>jar</packaging><generatePom>true</generatePom></configuration></execution>"
    deps+="<dependency><groupId>$1</groupId><artifactId>$2</artifactId><version>$3</version></dependency>"
  }
  # coordinates FILE RELEASE: FILE under Spark's coordinates if it is a Spark module, else under ours.
  coordinates() {
    name=$(basename "$1" .jar)
    local module=${name%%"_$SCALA_BINARY_VERSION-"*}
    if [[ $name == spark-* && $module != "$name" ]]; then
      repository_jar org.apache.spark "${module}_$SCALA_BINARY_VERSION" "${name#"${module}_$SCALA_BINARY_VERSION-"}" "$1"
    else
      repository_jar io.fraudstream.provided "$name" "$2" "$1"
    fi
  }
  for jar in "$pyspark_jars"/*.jar; do
    coordinates "$jar" "$SPARK_VERSION"
    shipped+="$(basename "$jar" | sed -E 's/-[0-9]+(\.[0-9]+)+[A-Za-z0-9_.-]*\.jar$//') "
  done
  for jar in "$CACHE"/spark-jars/*.jar; do
    artifact=$(basename "$jar" | sed -E 's/-[0-9]+(\.[0-9]+)+[A-Za-z0-9_.-]*\.jar$//')
    [[ $shipped == *" $artifact "* ]] || coordinates "$jar" "$SPARK_KAFKA_CONNECTOR_VERSION"
  done
  rm -rf "$dir"
  mkdir -p "$dir"
  cat >"$dir/spark-runtime.pom" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>io.fraudstream.provided</groupId><artifactId>spark-runtime</artifactId><version>$SPARK_VERSION</version>
<packaging>pom</packaging><description>The jars of pyspark $SPARK_VERSION and of its Kafka connector</description>
<dependencies>$deps</dependencies></project>
POM
  executions+="<execution><id>spark-runtime</id><phase>validate</phase><goals><goal>install-file</goal></goals>"
  executions+="<configuration><file>$dir/spark-runtime.pom</file><pomFile>$dir/spark-runtime.pom</pomFile>"
  executions+="<packaging>pom</packaging></configuration></execution>"
  cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>
<groupId>io.fraudstream.provision</groupId><artifactId>spark-repository</artifactId><version>1</version>
<packaging>pom</packaging><build><plugins><plugin><groupId>org.apache.maven.plugins</groupId>
<artifactId>maven-install-plugin</artifactId><version>$MAVEN_INSTALL_PLUGIN_VERSION</version>
<executions>$executions</executions></plugin></plugins></build></project>
POM
  mvn -q -B -Dstyle.color=never -s "$ROOT/scripts/maven-settings.xml" -Dmaven.repo.local="$repo" -f "$dir/pom.xml" validate \
    || die "installing the Spark jars into $repo failed (see the error above); retry with 'make install'"
  stamp spark-repository "$key"
}

# evaluator: the JVM evaluator (services/evaluator) built with Maven against the jars of the installed pyspark
# (spark-repository) into .cache/evaluator/: fraudstream-evaluator.jar, and fraudstream-evaluator-tests.jar (its test
# classes, for the Harness the Python property tests drive). Its tests run in `make test`, not here.
evaluator() {
  local out="$CACHE/evaluator" build="$CACHE/build/evaluator" key
  # PYSPARK_JARS_DIR (the image build) names pyspark's jars directly instead of the checkout's .venv.
  local pyspark_jars=${PYSPARK_JARS_DIR:-}
  if [ -z "$pyspark_jars" ]; then
    python_env
    pyspark_jars=$(.venv/bin/python -c 'import pathlib, pyspark; print(pathlib.Path(pyspark.__file__).parent / "jars")')
  fi
  spark_jars
  spark_repository "$pyspark_jars"
  key="$(cd services/evaluator && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
  key+="-$(sha256sum versions.env scripts/evaluator-maven.sh | sha256sum | cut -c1-16)-$(cat "$STAMPS/spark-repository")"
  if stamped evaluator "$key" && [ -f "$out/fraudstream-evaluator.jar" ] && [ -f "$out/fraudstream-evaluator-tests.jar" ]
  then return; fi
  log "evaluator: building the JVM evaluator with Maven"
  rm -rf "$build" "$out.tmp"
  scripts/evaluator-maven.sh -q -DskipTests package || die "the Maven build of the JVM evaluator failed (errors above)"
  mkdir -p "$out.tmp"
  cp "$build/fraudstream-evaluator.jar" "$build/fraudstream-evaluator-tests.jar" "$out.tmp/"
  rm -rf "$out"; mv "$out.tmp" "$out"
  stamp evaluator "$key"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(all)
for s in "${steps[@]}"; do
  case "$s" in
    python) python_env ;;
    kafka) kafka ;;
    spark-jars) spark_jars ;;
    k8s) k8s ;;
    monitoring) monitoring ;;
    monitoring-crds) monitoring_crds ;;
    evaluator) evaluator ;;
    all) python_env; kafka; spark_jars; evaluator; k8s ;;
    *) die "unknown step '$s' (python|kafka|spark-jars|evaluator|k8s|all)" ;;
  esac
done
