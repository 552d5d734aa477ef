#!/usr/bin/env bash
# Part of make test: the container image, built and started on a machine with no Docker engine
# and no registry. The base is Debian bookworm made with `debootstrap --variant=minbase`, slimmed as
# debian:bookworm-slim is, and imported into buildah's local store; the one executable is built on
# the host as the Dockerfile's build stage builds it (release, static Swift runtime, linked to by
# the four service names); the run stage is deploy/Dockerfile's own,
# taken from it at build time with only its FROM and its COPY --from=build changed (so the two
# cannot drift), and built with `buildah bud --isolation chroot`. Then the four executables start
# from the image (`buildah run --isolation chroot`, sharing the host's network) against the test
# cluster, each must answer /readyz, and the demo seed runs against them: the app, the study, a
# participant who signs up, enrolls and sends a check-in, and a second check-in. The image's size
# and contents go to .build/test-output/image.txt.
#
# Needs root (debootstrap, buildah's chroot isolation, and reading the e-mail the image's user
# wrote), through sudo when not root.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

: "${STUDYSTACK_TEST_DATABASE_URL:?run through make test (scripts/test.sh), which starts the test cluster}"
ensure_commands buildah:buildah debootstrap:debootstrap strip:binutils curl:curl jq:jq psql:postgresql-client
ensure_build_libraries

base=localhost/studystack-base:bookworm-slimmed
image=localhost/studystack:test
work=$(mktemp -d "${TMPDIR:-/tmp}/studystack-image.XXXXXX")
chmod 755 "$work"
containers=()
pids=()
root=()
is_root || root=(sudo)
cleanup() {
    local status=$?
    # sudo's process is root's: signalling it needs root too.
    for pid in "${pids[@]}"; do as_root kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    for container in "${containers[@]}"; do as_root buildah rm "$container" >/dev/null 2>&1 || true; done
    # The image is made again by every run (the base is kept): it is not left to fill the disk.
    as_root buildah rmi "$image" >/dev/null 2>&1 || true
    if [ "$status" -ne 0 ]; then
        for log in "$work"/logs/*.log; do
            [ -f "$log" ] && { printf '\n--- %s\n' "$(basename "$log")" >&2; tail -n 20 "$log" >&2; }
        done
    fi
    as_root rm -rf "$work"
}
trap cleanup EXIT INT TERM

# --- the base: Debian bookworm, minbase, made here once and kept in buildah's store ---------------
if ! as_root buildah inspect --type image "$base" >/dev/null 2>&1; then
    log "image: making the Debian bookworm base with debootstrap --variant=minbase"
    as_root debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 ||
        { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
    # What debian:bookworm-slim leaves out as well: the package lists, caches and the packages
    # debootstrap downloaded; and, as its slimming does, documentation (but for copyright
    # notices), manual pages and translations, now and for every package installed later.
    as_root rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin "$work/rootfs/var/cache/apt/archives/"*.deb
    as_root tee "$work/rootfs/etc/dpkg/dpkg.cfg.d/slim" >/dev/null <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
SLIM
    # And apt keeps neither its binary caches nor the packages it downloaded (bookworm-slim's
    # docker-clean settings).
    as_root tee "$work/rootfs/etc/apt/apt.conf.d/docker-clean" >/dev/null <<'CLEAN'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CLEAN
    as_root find "$work/rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    as_root find "$work/rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    as_root rm -rf "$work/rootfs/usr/share/"{man,groff,info,lintian,linda,locale}/*
    container=$(as_root buildah from scratch)
    containers+=("$container")
    as_root buildah copy --quiet "$container" "$work/rootfs" / >/dev/null
    as_root buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd /bin/bash "$container"
    as_root buildah commit --quiet "$container" "$base" >/dev/null
    as_root rm -rf "$work/rootfs"
fi

# --- the binaries, as the Dockerfile's build stage makes them --------------------------------------
log "image: building the executable (release, static Swift runtime)"
mkdir -p "$work/context/staging"
# In a build folder of its own, where make test builds it beside the tests (scripts/test.sh).
scratch=(--scratch-path .build-image)
swift build -c release --static-swift-stdlib --product studystack "${scratch[@]}" >"$work/build.log" 2>&1 ||
    { tail -n 30 "$work/build.log" >&2; die "building studystack failed"; }
release=$(swift build -c release --static-swift-stdlib "${scratch[@]}" --show-bin-path)
cp "$release/studystack" "$work/context/staging/"
strip --strip-debug "$work/context/staging/studystack"
for product in study-metadata registration response console; do ln -s studystack "$work/context/staging/$product"; done
cp -R "$release"/*.resources "$work/context/staging/"
# The backtracer, as deploy/Dockerfile's build stage copies it from its toolchain.
cp "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/libexec/swift/linux/swift-backtrace-static" "$work/context/staging/"

# --- the run stage, deploy/Dockerfile's own -------------------------------------------------------
# From its FROM to the end, with the base and the binaries' source replaced; each replacement
# must happen exactly once, or the Dockerfile has changed shape and this must be looked at again.
awk '/^# ---- run/ {on = 1} on' deploy/Dockerfile >"$work/run-stage"
[ "$(grep -c '^FROM debian:bookworm-slim$' "$work/run-stage")" -eq 1 ] || die "deploy/Dockerfile's run stage no longer starts FROM debian:bookworm-slim"
[ "$(grep -c '^COPY --from=build /staging/ /usr/local/bin/$' "$work/run-stage")" -eq 1 ] ||
    die "deploy/Dockerfile's run stage no longer copies /staging/ from the build stage"
[ "$(grep -c '^FROM\|--from=' "$work/run-stage")" -eq 2 ] || die "deploy/Dockerfile's run stage has another FROM or COPY --from"
sed -e "s#^FROM debian:bookworm-slim\$#FROM $base#" -e 's#^COPY --from=build /staging/ /usr/local/bin/$#COPY staging/ /usr/local/bin/#' \
    "$work/run-stage" >"$work/context/Containerfile"
log "image: buildah bud --isolation chroot (the run stage of deploy/Dockerfile)"
as_root buildah bud --quiet --isolation chroot --pull=never -f "$work/context/Containerfile" -t "$image" "$work/context" >"$work/bud.log" 2>&1 ||
    { tail -n 30 "$work/bud.log" >&2; die "buildah bud failed"; }
# A crash's backtrace needs the backtracer SWIFT_BACKTRACE names, inside the image.
backtracer=$(as_root buildah inspect --type image --format '{{range .OCIv1.Config.Env}}{{println .}}{{end}}' "$image" |
    sed -n 's/^SWIFT_BACKTRACE=.*swift-backtrace=\([^,]*\).*/\1/p')
[ -n "$backtracer" ] || die "the image sets no SWIFT_BACKTRACE with the backtracer's path"
probe=$(as_root buildah from --pull=never "$image")
containers+=("$probe")
as_root buildah run --isolation chroot "$probe" -- test -x "$backtracer" || die "the image has no backtracer at $backtracer"
# A container runs as the image's own user, not root; the four names lead to the one executable.
[ "$(as_root buildah run --isolation chroot "$probe" -- id -u)" = 10001 ] || die "the image's user is not studystack (10001)"
for svc in study-metadata registration response console; do
    [ "$(as_root buildah run --isolation chroot "$probe" -- readlink "/usr/local/bin/$svc")" = studystack ] ||
        die "/usr/local/bin/$svc in the image is not a link to studystack"
done

# --- started from the image against the test cluster ----------------------------------------------
mkdir -p "$work/logs"
prefix="image_$(random_hex 4)"
create_run_databases "$prefix"
trap 'cleanup; drop_run_databases "$prefix"' EXIT INT TERM

key() { head -c 32 /dev/urandom | base64 | tr -d '\n'; }
declare -A port signing
for svc in study-metadata registration response console; do port[$svc]=$(free_port); signing[$svc]=$(key); done
export STUDY_METADATA_INTERNAL_KEY=${signing[study-metadata]} REGISTRATION_INTERNAL_KEY=${signing[registration]} \
    RESPONSE_INTERNAL_KEY=${signing[response]}
encryption_key=$(key)
admin_password="Image-$(head -c 9 /dev/urandom | base64 | tr -d '/+=')-1a"
export STUDY_METADATA_URL="http://127.0.0.1:${port[study-metadata]}"
export REGISTRATION_URL="http://127.0.0.1:${port[registration]}"
export RESPONSE_URL="http://127.0.0.1:${port[response]}"
declare -A database=([study-metadata]=metadata [registration]=registration [response]=response)
# The registration service writes its e-mail into the container's mail folder, which is this
# folder of the host (the image's user, 10001, must be able to write it).
data="$work/data"
mkdir -p "$data/mail"
chmod 777 "$data/mail"
for svc in study-metadata registration response console; do
    volumes=()
    settings=(-e HTTP_PORT="${port[$svc]}" -e STUDY_METADATA_URL="$STUDY_METADATA_URL" -e REGISTRATION_URL="$REGISTRATION_URL"
              -e RESPONSE_URL="$RESPONSE_URL")
    if [ "$svc" = console ]; then
        settings+=(-e CONSOLE_KEY="$(key)")
    elif [ "$svc" = registration ]; then
        volumes=(-v "$data/mail:/var/lib/studystack/mail")
    fi
    if [ "$svc" != console ]; then
        owner="${prefix}_${database[$svc]}"
        settings+=(-e DATABASE_URL="postgres://$owner:${db_password[${database[$svc]}]}@$hostport/$owner?sslmode=disable"
                   -e INTERNAL_SIGNING_KEY="${signing[$svc]}" -e INTERNAL_CALLER_KEYS="$(python3 scripts/internal-keys.py callers "$svc")"
                   -e STUDYSTACK_ENCRYPTION_KEY="$encryption_key"
                   -e STUDYSTACK_ADMIN_EMAIL=admin@image.test -e STUDYSTACK_ADMIN_PASSWORD="$admin_password"
                   -e QUERY_DATABASE_URL="postgres://${prefix}_query:${db_password[query]}@$hostport/${prefix}_response?sslmode=disable")
    fi
    container=$(as_root buildah from --pull=never "$image")
    containers+=("$container")
    # The image's own user, environment and working directory; the command is the service's name.
    # Started without the as_root function, so that $! is buildah's own process (or sudo's, which
    # passes signals on): SIGTERM to it stops the service; to a function's subshell it would not.
    "${root[@]}" buildah run --isolation chroot "${settings[@]}" "${volumes[@]}" "$container" -- "$svc" \
        >"$work/logs/$svc.log" 2>&1 &
    pids+=($!)
done
for svc in study-metadata registration response console; do
    wait_ready "http://127.0.0.1:${port[$svc]}" || die "$svc, started from the image, did not become ready"
done
log "image: the four executables started from $image are ready"

# The demo seed: the app, the study, tokens, and a participant who signs up (the code from the
# e-mail the registration service wrote inside the container), enrolls and sends a check-in.
printf 'STUDYSTACK_ADMIN_EMAIL=admin@image.test\nSTUDYSTACK_ADMIN_PASSWORD=%s\n' "$admin_password" >"$data/secrets.env"
# As root: the e-mail files are the image user's, mode 0600.
seed_env=(env STUDYSTACK_DATA="$data" STUDY_METADATA_URL="$STUDY_METADATA_URL" REGISTRATION_URL="$REGISTRATION_URL"
          RESPONSE_URL="$RESPONSE_URL")
as_root "${seed_env[@]}" scripts/seed-demo.sh >"$work/logs/seed.log" 2>&1 ||
    { cat "$work/logs/seed.log" >&2; die "the demo seed failed against the image"; }
[ "$(as_root jq .runs "$data/demo-participant.json")" = 1 ] || die "the demo participant did not enroll against the image"
as_root "${seed_env[@]}" scripts/demo-participant.sh | grep -q "check-in 2 sent" ||
    die "the demo participant's second check-in failed against the image"
log "image: the demo participant signed up, enrolled and sent two check-ins"

# SIGTERM stops each of them, as `docker stop` does (the Dockerfile's STOPSIGNAL), and nothing
# of them is left answering.
for pid in "${pids[@]}"; do as_root kill -TERM "$pid"; done
for svc in study-metadata registration response console; do
    for _ in $(seq 1 150); do
        curl -s -o /dev/null "http://127.0.0.1:${port[$svc]}/readyz" || break
        sleep 0.2
    done
    curl -s -o /dev/null "http://127.0.0.1:${port[$svc]}/readyz" && die "$svc, started from the image, still answers 30 s after SIGTERM"
done
wait
pids=()
log "image: SIGTERM stopped all four"

# --- what the image is -----------------------------------------------------------------------------
mkdir -p .build/test-output
{
    echo "$image, built $(date -u +%Y-%m-%dT%H:%MZ) from $base and deploy/Dockerfile's run stage"
    as_root buildah images --format 'size: {{.Size}}' "$image"
    echo "executable: studystack $(ls -l --block-size=M "$work/context/staging/studystack" | awk '{print $5}')," \
        "linked to by study-metadata, registration, response and console"
    echo "Debian packages ($(as_root buildah run --isolation chroot "${containers[0]}" -- dpkg-query -W | wc -l)):"
    as_root buildah run --isolation chroot "${containers[0]}" -- dpkg-query -W -f '  ${Package} ${Version}\n'
} >.build/test-output/image.txt
log "image: $(sed -n 2p .build/test-output/image.txt); contents in .build/test-output/image.txt"
# At most 300 MB (docs/operations.md). buildah writes the size in decimal units ("241 MB").
size_text=$(as_root buildah images --format '{{.Size}}' "$image")
size_mb=$(awk -v size="$size_text" 'BEGIN {
    split(size, part, " "); unit = part[2]
    scale = unit == "GB" ? 1000 : unit == "MB" ? 1 : unit == "kB" || unit == "KB" ? 0.001 : unit == "B" ? 0.000001 : -1
    if (scale < 0) { print -1; exit }
    printf "%d", part[1] * scale + 0.999 }')
[ "$size_mb" -ge 0 ] || die "the image's size reads as \"$size_text\", which this script cannot compare"
[ "$size_mb" -le 300 ] || die "the image is $size_text: more than the 300 MB it may be (docs/operations.md)"
