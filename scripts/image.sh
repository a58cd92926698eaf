#!/usr/bin/env bash
# Builds fraudstream's images from the Dockerfile without a Docker engine (root only), and imports them into
# containerd:
#   scripts/image.sh [--containerd ADDRESS]
#
# 1. buildah, debootstrap, ctr and runc from Debian, at the versions.env pins (scripts/provision.sh image-tools).
# 2. DEBIAN_IMAGE (debian:bookworm-slim) made with `debootstrap --variant=minbase` of the suite its tag names, once:
#    the root file system is cached as .cache/image/base-<key>.tar, <key> a hash of everything it is made from
#    (suite, architecture, debootstrap's version, this script's recipe), and committed into buildah's storage under
#    that name with the label io.fraudstream.base-key=<key>.
# 3. `buildah bud --layers --isolation chroot --network host` of the targets `app` and `kafka`, with the Dockerfile's
#    build arguments from versions.env. buildah's storage (overlay driver, IMAGE_STORAGE_DRIVER=vfs to change it) and
#    its layer cache live under .cache/image/, so an unchanged rebuild reuses every layer.
# 4. Content-addressed tags, as `make kind-deploy` gives them: fraudstream:<first 12 hex digits of the image id> and
#    fraudstream-kafka:<...>; each is written once as a docker-archive under .cache/image/archives/ (the form
#    `ctr images import` reads). .cache/image/images.env records them (shell assignments):
#    FRAUDSTREAM_IMAGE, FRAUDSTREAM_IMAGE_TAG, FRAUDSTREAM_IMAGE_ARCHIVE and the same with FRAUDSTREAM_KAFKA_IMAGE.
# 5. With a containerd address (--containerd, else $K8S_CONTAINERD_ADDRESS, e.g. from `source .local/k8s.env`):
#    `ctr -n k8s.io images import` of both archives, the namespace kubelet's CRI uses; nothing is pushed anywhere.
#
# Output: log lines on stderr; exit status 0 only when both images are built (and imported, when asked).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
set -a; . ./versions.env; set +a
WORK="$ROOT/.cache/image"
DRIVER=${IMAGE_STORAGE_DRIVER:-overlay}
BUILDAH=(buildah --root "$WORK/storage-$DRIVER" --runroot "$WORK/run-$DRIVER" --storage-driver "$DRIVER")

log() { printf '[image] %s\n' "$*" >&2; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }

containerd_address=${K8S_CONTAINERD_ADDRESS:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --containerd) [ $# -ge 2 ] || die "--containerd needs an address"; containerd_address=$2; shift 2 ;;
    *) die "unknown argument '$1' (usage: scripts/image.sh [--containerd ADDRESS])" ;;
  esac
done
[ "$(id -u)" -eq 0 ] || die "building images without Docker needs root (debootstrap, buildah's chroot isolation)"

scripts/provision.sh image-tools
mkdir -p "$WORK/archives"
# One build at a time per checkout (they share buildah's storage and the archives).
exec 9>"$WORK/lock"
flock 9

# release_storage: on any exit, removes the working containers a failed step may have left and unmounts what
# buildah's overlay driver keeps mounted (its layers' merged views and its home's private bind mount), so that nothing
# of the build stays mounted; the images and the layer cache stay on disk.
release_storage() {
  "${BUILDAH[@]}" rm --all >/dev/null 2>&1 || true
  local mnt
  findmnt -rn -o TARGET | awk -v home="$WORK/storage-$DRIVER/" 'index($0, home) == 1' | sort -r \
    | while read -r mnt; do umount "$mnt" 2>/dev/null || umount -l "$mnt" || true; done
}
trap release_storage EXIT

# ---- 2. the base image ---------------------------------------------------------------------------------------------
suite=${DEBIAN_IMAGE#*:}; suite=${suite%-slim}
arch=$(dpkg --print-architecture)
base_key=$( { echo "$DEBIAN_IMAGE $suite $arch"; dpkg-query -W -f='${Version}' debootstrap;
  sed -n '/^make_base()/,/^}/p' "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)
base_tar="$WORK/base-$base_key.tar"

# make_base: debootstraps $suite into a scratch directory and writes its root file system as $base_tar, trimmed as
# Debian's own slim images are (no documentation, no apt lists or caches, no logs); apt's sources name the suite, its
# updates and its security archive, on the mirror debootstrap used.
make_base() {
  local scratch="$WORK/base-$base_key.tmp"
  rm -rf "$scratch"
  mkdir -p "$scratch"
  log "base: debootstrap --variant=minbase $suite ($arch), once (a minute or two)"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$scratch/rootfs" >"$scratch/debootstrap.log" 2>&1 \
    || { tail -20 "$scratch/debootstrap.log" >&2; die "debootstrap failed (log: $scratch/debootstrap.log)"; }
  local rootfs="$scratch/rootfs" mirror
  mirror=$(awk '$1 == "deb" {print $2; exit}' "$rootfs/etc/apt/sources.list")
  [ -n "$mirror" ] || die "debootstrap wrote no apt source"
  rm -f "$rootfs/etc/apt/sources.list"
  printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates\nComponents: main\nSigned-By: %s\n\n' \
    "$mirror" "$suite" "$suite" /usr/share/keyrings/debian-archive-keyring.gpg >"$rootfs/etc/apt/sources.list.d/debian.sources"
  printf 'Types: deb\nURIs: %s-security\nSuites: %s-security\nComponents: main\nSigned-By: %s\n' \
    "$mirror" "$suite" /usr/share/keyrings/debian-archive-keyring.gpg >>"$rootfs/etc/apt/sources.list.d/debian.sources"
  # As Debian's slim images: no man pages or docs (dpkg skips them from now on), no apt lists or package caches.
  printf 'path-exclude /usr/share/doc/*\npath-include /usr/share/doc/*/copyright\npath-exclude /usr/share/man/*\n' \
    >"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
  printf 'path-exclude /usr/share/info/*\npath-exclude /usr/share/locale/*\n' >>"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
  printf 'APT::Install-Recommends "false";\nAcquire::Languages "none";\n' >"$rootfs/etc/apt/apt.conf.d/docker-slim"
  find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/var/lib/apt/lists/* \
    "$rootfs"/var/cache/apt/* "$rootfs"/var/log/* "$rootfs"/dev/* "$rootfs"/tmp/* "$rootfs"/run/*
  tar --numeric-owner --xattrs -C "$rootfs" -cf "$base_tar.tmp" .
  mv "$base_tar.tmp" "$base_tar"
  rm -rf "$scratch"
}

[ -f "$base_tar" ] || make_base
have_key=$("${BUILDAH[@]}" inspect --type image --format '{{index .OCIv1.Config.Labels "io.fraudstream.base-key"}}' \
  "$DEBIAN_IMAGE" 2>/dev/null || true)
if [ "$have_key" != "$base_key" ]; then
  log "base: importing $base_tar into buildah's storage as $DEBIAN_IMAGE"
  ctr=$("${BUILDAH[@]}" from --pull=never scratch)
  "${BUILDAH[@]}" add "$ctr" "$base_tar" / >/dev/null
  "${BUILDAH[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --label "io.fraudstream.base-key=$base_key" --os linux --arch "$arch" "$ctr"
  "${BUILDAH[@]}" commit --rm -q "$ctr" "docker.io/library/$DEBIAN_IMAGE" >/dev/null
fi

# ---- 3. and 4. the images ------------------------------------------------------------------------------------------
build_args=()
for arg in DEBIAN_IMAGE PYTHON_PACKAGE JRE_PACKAGE JDK_PACKAGE; do build_args+=(--build-arg "$arg=${!arg}"); done
# The host's trust stores, for pip and Maven inside RUN (a machine behind a TLS-inspecting proxy trusts its CA there,
# Debian's images do not): bind-mounted read-only for the build's RUN steps, never committed into a layer.
host_bundle=/etc/ssl/certs/ca-certificates.crt host_keystore=/etc/ssl/certs/java/cacerts
if [ -f "$host_bundle" ]; then
  build_args+=(-v "$host_bundle:/run/fraudstream-build/ca-certificates.crt:ro"
    --build-arg PIP_CERT=/run/fraudstream-build/ca-certificates.crt)
fi
if [ -f "$host_keystore" ]; then
  build_args+=(-v "$host_keystore:/run/fraudstream-build/cacerts:ro"
    --build-arg "MAVEN_OPTS=-Djavax.net.ssl.trustStore=/run/fraudstream-build/cacerts")
fi

# build TARGET NAME PREFIX: builds TARGET as NAME:dev, writes its archive and PREFIX_* lines for images.env.
build() {
  local target=$1 name=$2 prefix=$3 id tag archive
  log "building target $target with buildah"
  "${BUILDAH[@]}" bud --layers --force-rm --pull=never --isolation chroot --network host "${build_args[@]}" \
    --target "$target" -t "localhost/$name:dev" -f Dockerfile . >&2 || die "buildah bud --target $target failed"
  id=$("${BUILDAH[@]}" inspect --type image --format '{{.FromImageID}}' "localhost/$name:dev")
  tag=${id#sha256:}; tag=${tag:0:12}
  archive="$WORK/archives/$name-$tag.tar"
  if [ ! -f "$archive" ]; then
    rm -f "$WORK/archives/$name"-*.tar
    "${BUILDAH[@]}" push -q "localhost/$name:dev" "docker-archive:$archive.tmp:docker.io/library/$name:$tag" >&2 \
      || die "writing $archive failed"
    mv "$archive.tmp" "$archive"
  fi
  printf '%s=%q\n%s_TAG=%q\n%s_ARCHIVE=%q\n' "$prefix" "$name:$tag" "$prefix" "$tag" "$prefix" "$archive" >>"$WORK/images.env.tmp"
  log "$name:$tag ($archive)"
}

rm -f "$WORK/images.env.tmp"
build app fraudstream FRAUDSTREAM_IMAGE
build kafka fraudstream-kafka FRAUDSTREAM_KAFKA_IMAGE
mv "$WORK/images.env.tmp" "$WORK/images.env"

# ---- 5. into containerd --------------------------------------------------------------------------------------------
if [ -n "$containerd_address" ]; then
  . "$WORK/images.env"
  for archive in "$FRAUDSTREAM_IMAGE_ARCHIVE" "$FRAUDSTREAM_KAFKA_IMAGE_ARCHIVE"; do
    log "importing $(basename "$archive") into containerd at $containerd_address (namespace k8s.io)"
    ctr --address "$containerd_address" --namespace k8s.io images import "$archive" >&2 \
      || die "ctr images import $archive failed (is containerd running at $containerd_address?)"
  done
fi
log "done: $WORK/images.env"
