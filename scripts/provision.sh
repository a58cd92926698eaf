#!/usr/bin/env bash
# Installs fraudstream's local toolchain into the checkout, idempotently.
#   scripts/provision.sh [python|kafka|spark-jars|evaluator|k8s|k8s-node|image-tools|monitoring|monitoring-crds|all]...
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
  # The local stack (fraudstream_localstack) is development tooling: not a package of the project, so neither the
  # wheel nor the image holds it; the checkout's venv finds it through src/ on its path.
  local site
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf '%s\n' "$PWD/src" >"$site/fraudstream-localstack.pth"
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
  key+="-prometheus-$PROMETHEUS_JAVA_CLIENT_VERSION"
  if stamped spark-jars "$key" && [ -d "$CACHE/spark-jars" ]; then return; fi
  log "spark-jars: resolving spark-sql-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_CONNECTOR_VERSION and Prometheus' Java client with Maven"
  maven_copy spark-kafka "$CACHE/spark-jars" \
    "org.apache.spark:spark-sql-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_CONNECTOR_VERSION" \
    "=org.apache.spark:spark-token-provider-kafka-0-10_$SCALA_BINARY_VERSION:$SPARK_KAFKA_TOKEN_PROVIDER_VERSION" \
    "io.prometheus:prometheus-metrics-core:$PROMETHEUS_JAVA_CLIENT_VERSION" \
    "io.prometheus:prometheus-metrics-exporter-httpserver:$PROMETHEUS_JAVA_CLIENT_VERSION"
  stamp spark-jars "$key"
}

# k8s_module_dir: a Go module that requires k8s.io/kubernetes@$KUBERNETES_VERSION with every staging module replaced
# by its published tag (upstream points them at ./staging/...); prints its directory. Shared by `k8s` and `k8s-node`.
k8s_module_dir() {
  local dir="$CACHE/build/k8s-$KUBERNETES_VERSION"
  mkdir -p "$dir"
  if [ ! -f "$dir/go.mod" ] || ! grep -q "^require k8s.io/kubernetes $KUBERNETES_VERSION\$" "$dir/go.mod"; then
    local gomod
    gomod=$(cd "$dir" && go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p') \
      || die "go could not download k8s.io/kubernetes@$KUBERNETES_VERSION; retry with 'make install'"
    {
      echo "module fraudstream.local/k8sbuild"
      echo "go 1.24"
      echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
      sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => ./staging/src/.*#replace \1 => \1 '"$KUBERNETES_STAGING_VERSION"'#p' "$gomod"
    } >"$dir/go.mod"
    grep -q '^replace k8s.io/api ' "$dir/go.mod" || die "no staging replaces found in $gomod"
  fi
  printf '%s' "$dir"
}

# k8s_build OUTDIR PACKAGE...: one `go build` of k8s.io/kubernetes commands into OUTDIR, stamped with the release's
# version (as upstream's hack/lib/version.sh does), so that `kubectl version` and the node report v1.x.y and not
# v0.0.0-master.
k8s_build() {
  local out=$1 dir; shift
  dir=$(k8s_module_dir) && [ -n "$dir" ] || return 1
  local major=${KUBERNETES_VERSION#v}; major=${major%%.*}
  local minor=${KUBERNETES_VERSION#v*.}; minor=${minor%%.*}
  local ldflags="-s -w" pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    ldflags+=" -X $pkg.gitTreeState=clean"
  done
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local go build -trimpath -ldflags "$ldflags" -o "$out/" "$@")
}

# k8s: the local stack's control plane and tools. kube-apiserver, kube-controller-manager and kubectl built from
# k8s.io/kubernetes, etcd from go.etcd.io/etcd/server/v3, helm by go install.
k8s() {
  local key="k8s-$KUBERNETES_VERSION-etcd-$ETCD_VERSION-helm-$HELM_VERSION-versioned"
  if stamped k8s "$key" && [ -x "$BIN/kube-apiserver" ] && [ -x "$BIN/kube-controller-manager" ] && [ -x "$BIN/etcd" ] \
    && [ -x "$BIN/kubectl" ] && [ -x "$BIN/helm" ]; then return; fi
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
  log "k8s: building kube-apiserver, kube-controller-manager and kubectl $KUBERNETES_VERSION from the Go module proxy (minutes, once)"
  k8s_build "$BIN" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl || die "building kube-apiserver/kube-controller-manager/kubectl failed; retry with 'make install'"
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

# ---- The local Kubernetes node (issue #13): `k8s-node`, run by `make install` and `make k8s-up` ------------------
# apt_install_pinned STEP NAME=VERSION...: installs Debian packages at the versions versions.env names. When the
# archive no longer carries that version (Debian replaced it with a point release), the archive's version is installed
# instead, with a warning naming both: a security update must not break CI. Prints nothing; the stamp records versions.
apt_install_pinned() {
  local step=$1; shift
  local want=() spec name version avail
  for spec in "$@"; do
    name=${spec%%=*}; version=${spec#*=}
    [ "$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$name" 2>/dev/null)" = "installed $version" ] && continue
    avail=$(apt-cache madison "$name" 2>/dev/null | awk -v v="$version" '$3 == v {print v; exit}')
    if [ -z "$avail" ]; then
      log "$step: WARNING: Debian's archive has no $name $version (versions.env); installing the archive's $name"
      want+=("$name")
    else
      want+=("$name=$version")
    fi
  done
  [ ${#want[@]} -gt 0 ] || return 0
  command -v apt-get >/dev/null || die "$step: apt-get not found; install Debian's ${*%%=*} and rerun"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  log "$step: installing Debian's ${want[*]} with apt-get"
  $sudo apt-get update -qq || die "$step: apt-get update failed; rerun"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${want[@]}" >/dev/null \
    || die "$step: apt-get install ${want[*]} failed; rerun"
}

# node_packages: the node's runtime from Debian: containerd (CRI), runc, the CNI plugins (/usr/lib/cni), iptables
# (kube-proxy, portmap), conntrack (kube-proxy's cleanup of stale UDP flows) and nftables (`nft`, to look at and
# check the rules). The packages start no service here: the node runs its own containerd with its own configuration
# and directories.
node_packages() {
  local specs=("containerd=$DEB_CONTAINERD_VERSION" "runc=$DEB_RUNC_VERSION"
    "containernetworking-plugins=$DEB_CNI_PLUGINS_VERSION" "iptables=$DEB_IPTABLES_VERSION" "conntrack=$DEB_CONNTRACK_VERSION"
    "nftables=$DEB_NFTABLES_VERSION")
  local have
  have=$(dpkg-query -W -f='${Package}=${Version} ' "${specs[@]%%=*}" 2>/dev/null || true)
  if stamped node-packages "$have" && command -v containerd >/dev/null && command -v runc >/dev/null \
    && [ -x /usr/lib/cni/bridge ] && command -v iptables >/dev/null && command -v nft >/dev/null; then return; fi
  apt_install_pinned node-packages "${specs[@]}"
  if command -v systemctl >/dev/null && systemctl is-active --quiet containerd 2>/dev/null; then
    log "node-packages: the package started a system containerd; the node does not use it (its socket differs)"
  fi
  have=$(dpkg-query -W -f='${Package}=${Version} ' "${specs[@]%%=*}")
  stamp node-packages "$have"
}

# node_binaries: kubelet, kube-proxy and kube-scheduler from the same k8s.io/kubernetes as kube-apiserver.
node_binaries() {
  local key="k8s-node-$KUBERNETES_VERSION-versioned"
  if stamped k8s-node "$key" && [ -x "$BIN/kubelet" ] && [ -x "$BIN/kube-proxy" ] && [ -x "$BIN/kube-scheduler" ]; then
    return
  fi
  log "k8s-node: building kubelet, kube-proxy and kube-scheduler $KUBERNETES_VERSION (minutes, once)"
  k8s_build "$BIN" k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler \
    || die "building kubelet/kube-proxy/kube-scheduler failed; retry with 'make install'"
  stamp k8s-node "$key"
}

# node_images: the static binaries of the node's images (their OCI archives are written at k8s-up by
# fraudstream_localstack.oci): the pause (sandbox) process and the probe (the smoke check's server and client) from
# scripts/k8s-node/, and CoreDNS built from github.com/coredns/coredns@$COREDNS_VERSION with the plugins
# scripts/k8s-node/coredns/main.go names.
# Each has a stamp of its own, so that changing the probe does not rebuild CoreDNS.
node_images() {
  local src="$ROOT/scripts/k8s-node" out="$CACHE/k8s-node"
  local key tool cdir="$CACHE/build/coredns-$COREDNS_VERSION"
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
  mkdir -p "$out"
  for tool in pause probe; do
    key="$(sha256sum "$src/$tool/main.go" | cut -c1-16)"
    if stamped "k8s-node-$tool" "$key" && [ -x "$out/$tool" ]; then continue; fi
    log "k8s-node: building $tool"
    mkdir -p "$CACHE/build/$tool"
    cp "$src/$tool/main.go" "$CACHE/build/$tool/main.go"
    printf 'module fraudstream.local/%s\ngo 1.24\n' "$tool" >"$CACHE/build/$tool/go.mod"
    (cd "$CACHE/build/$tool" && go build -trimpath -ldflags "-s -w" -o "$out/$tool" .) || die "building $tool failed"
    stamp "k8s-node-$tool" "$key"
  done
  key="$COREDNS_VERSION-$(sha256sum "$src/coredns/main.go" | cut -c1-16)"
  if stamped k8s-node-coredns "$key" && [ -x "$out/coredns" ]; then return; fi
  mkdir -p "$cdir"
  log "k8s-node: building CoreDNS $COREDNS_VERSION (minutes, once)"
  cp "$src/coredns/main.go" "$cdir/main.go"
  printf 'module fraudstream.local/coredns\ngo 1.24\nrequire github.com/coredns/coredns %s\n' "$COREDNS_VERSION" >"$cdir/go.mod"
  (cd "$cdir" && go build -trimpath -ldflags "-s -w" \
    -o "$out/coredns" .) || die "building CoreDNS $COREDNS_VERSION failed; retry with 'make install'"
  stamp k8s-node-coredns "$key"
}

# prometheus_server: the Prometheus server `make k8s-deploy` runs in the local cluster. Debian's package (the
# `monitoring` step: promtool and the server the dashboard test runs) is built without Kubernetes service discovery,
# so this one is built from the Go module github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION, with the
# discovery plugins cut to what it uses (kubernetes, plus the file and http minimum), like CoreDNS above. Without the
# npm-built web UI: the HTTP API serves every query. Static, for a one-file image. Its promtool (same discoveries)
# checks the configurations made for it.
prometheus_server() {
  local out="$CACHE/k8s-node" src pdir="$CACHE/build/prometheus-$PROMETHEUS_MODULE_VERSION"
  local key="$PROMETHEUS_MODULE_VERSION-kubernetes-sd-promtool"
  if stamped prometheus-server "$key" && [ -x "$out/prometheus" ] && [ -x "$out/promtool" ]; then return; fi
  export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
  log "prometheus-server: building prometheus (module $PROMETHEUS_MODULE_VERSION) with Kubernetes discovery (minutes, once)"
  mkdir -p "$out" "$CACHE/build"
  src=$(cd "$CACHE/build" && go mod download -json "github.com/prometheus/prometheus@$PROMETHEUS_MODULE_VERSION" \
    | sed -n 's/.*"Dir": "\(.*\)".*/\1/p') || true
  [ -n "$src" ] && [ -d "$src/cmd/prometheus" ] \
    || die "go could not download prometheus@$PROMETHEUS_MODULE_VERSION; retry with 'make install'"
  rm -rf "$pdir"
  cp -r "$src" "$pdir"
  chmod -R u+w "$pdir"
  printf '// Generated by scripts/provision.sh: Kubernetes discovery only (file and http are in minimum.go).\npackage plugins\n\nimport _ "github.com/prometheus/prometheus/discovery/kubernetes"\n' \
    >"$pdir/plugins/plugins.go"
  (cd "$pdir" && go build -trimpath -ldflags "-s -w" -o "$out/" ./cmd/prometheus ./cmd/promtool) \
    || die "building prometheus $PROMETHEUS_MODULE_VERSION failed; retry with 'make install'"
  rm -rf "$pdir"
  stamp prometheus-server "$key"
}

k8s_node() { node_packages; k8s; node_binaries; node_images; prometheus_server; }

# image_tools: what `make image` (scripts/image.sh) builds the Dockerfile with, from Debian: buildah (with
# --isolation chroot: no container runtime of its own), debootstrap (the base image) and containerd's `ctr` and runc
# (the node's packages: the built image is imported into containerd and the image test runs it there).
image_tools() {
  local specs=("buildah=$DEB_BUILDAH_VERSION" "debootstrap=$DEB_DEBOOTSTRAP_VERSION"
    "containerd=$DEB_CONTAINERD_VERSION" "runc=$DEB_RUNC_VERSION")
  local have
  have=$(dpkg-query -W -f='${Package}=${Version} ' "${specs[@]%%=*}" 2>/dev/null || true)
  if stamped image-tools "$have" && command -v buildah >/dev/null && command -v debootstrap >/dev/null \
    && command -v ctr >/dev/null && command -v runc >/dev/null; then return; fi
  apt_install_pinned image-tools "${specs[@]}"
  have=$(dpkg-query -W -f='${Package}=${Version} ' "${specs[@]%%=*}")
  stamp image-tools "$have"
}
# ---- end of issue #13 steps ---------------------------------------------------------------------------------------

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
# One build at a time, under a lock held for this step only (make java-test, which builds into the same directory,
# takes it too): stacks, benchmarks and test sessions that run side by side each call this step before they start
# a detector (fraudstream_localstack.layout.build_evaluator).
evaluator() {
  ( flock 9; evaluator_build ) 9>"$STAMPS/evaluator.lock"
}

evaluator_build() {
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
    k8s-node) k8s_node ;;
    image-tools) image_tools ;;
    monitoring) monitoring ;;
    monitoring-crds) monitoring_crds ;;
    evaluator) evaluator ;;
    all) python_env; kafka; spark_jars; evaluator; k8s ;;
    *) die "unknown step '$s' (python|kafka|spark-jars|evaluator|k8s|k8s-node|image-tools|monitoring|monitoring-crds|all)" ;;
  esac
done
