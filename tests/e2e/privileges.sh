#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Privileges: under sudo the workload runs as the invoking user and the files
# belong to them; --user and --as-root choose otherwise; files are never
# written through a planted symlink; argv and environment arrive exactly.
# sudo is simulated the way sudo itself tells a program who invoked it:
# SUDO_UID/SUDO_GID in the environment of a root process.
. "$(dirname "$0")/lib.sh"
FAKE="$FAKES/fake_collector"
export OFFCPU_FAKE_STDOUT=$DATA/bcc/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null

if ! need_root || ! id nobody >/dev/null 2>&1; then
	skip privileges "needs root and user nobody"
	exit 0
fi
NUID=$(id -u nobody)
NGID=$(id -g nobody)
NHOME=$(getent passwd nobody | cut -d: -f6)
# nobody must be able to reach the directory the workload writes into.
base=$(mktemp -d /tmp/offcpu-priv.XXXXXX)
chmod 0755 "$base"
mkdir -m 0777 "$base/w"

t=under_sudo_the_workload_runs_as_the_invoking_user
d=$base/sudo
SUDO_UID=$NUID SUDO_GID=$NGID SUDO_USER=nobody "$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- \
	sh -c "id -u > $base/w/uid; id -g > $base/w/gid; echo \"\$HOME\" > $base/w/home"
owner=$(stat -c %u "$d/offcpu.summary.json" 2>/dev/null)
if [ "$(cat "$base/w/uid" 2>/dev/null)" != "$NUID" ] || [ "$(cat "$base/w/gid")" != "$NGID" ]; then
	fail $t "workload ran as uid $(cat "$base/w/uid" 2>/dev/null) gid $(cat "$base/w/gid" 2>/dev/null)"
elif [ "$(cat "$base/w/home")" != "$NHOME" ]; then
	fail $t "HOME=$(cat "$base/w/home"), expected $NHOME"
elif [ "$owner" != "$NUID" ] || [ "$(stat -c %u "$d")" != "$NUID" ] ||
	[ "$(stat -c %u "$d/offcpu.time.txt")" != "$NUID" ]; then
	fail $t "files belong to uid $owner, expected $NUID"
else
	ok $t
fi
rm -f "$base"/w/*

t=as_root_keeps_root_under_sudo
SUDO_UID=$NUID SUDO_GID=$NGID "$OFFCPU_BIN" record --tool "$FAKE" --as-root -o "$base/asroot" -q -- \
	sh -c "id -u > $base/w/uid"
[ "$(cat "$base/w/uid")" = 0 ] && ok $t || fail $t "workload ran as uid $(cat "$base/w/uid")"
rm -f "$base"/w/*

t=user_option_picks_the_user
"$OFFCPU_BIN" record --tool "$FAKE" --user nobody -o "$base/user" -q -- sh -c "id -u > $base/w/uid"
[ "$(cat "$base/w/uid")" = "$NUID" ] && ok $t || fail $t "workload ran as uid $(cat "$base/w/uid")"
rm -f "$base"/w/*

t=root_without_sudo_runs_the_workload_as_root
env -u SUDO_UID -u SUDO_GID "$OFFCPU_BIN" record --tool "$FAKE" -o "$base/root" -q -- sh -c "id -u > $base/w/uid"
[ "$(cat "$base/w/uid")" = 0 ] && ok $t || fail $t "workload ran as uid $(cat "$base/w/uid")"

t=unknown_user_is_a_one_line_error_before_anything_runs
out=$("$OFFCPU_BIN" record --tool "$FAKE" --user no-such-user-x -o "$base/nouser" -q -- touch "$base/w/ran" 2>&1)
rc=$?
if [ $rc -ne 125 ] || [ -e "$base/w/ran" ] || [ "$(echo "$out" | wc -l)" -ne 1 ]; then
	fail $t "rc=$rc out=$out"
else
	ok $t
fi

t=planted_symlinks_are_never_followed
d=$base/planted
mkdir -p "$d"
echo precious >"$base/victim"
ln -s "$base/victim" "$d/offcpu.time.txt"
ln -s "$base/victim" "$d/offcpu.summary.json"
"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- true 2>/dev/null
if [ "$(cat "$base/victim")" != precious ]; then
	fail $t "the symlink's target was written: $(head -c 60 "$base/victim")"
else
	ok $t
fi

t=environment_arrives_exactly
weird='a b $HOME `x` "q" '"'s'"' *'
OFFCPU_WEIRD=$weird "$OFFCPU_BIN" record --tool "$FAKE" -o "$base/env" -q -- \
	sh -c "printf '%s' \"\$OFFCPU_WEIRD\" > $base/w/env"
[ "$(cat "$base/w/env")" = "$weird" ] && ok $t || fail $t "got '$(cat "$base/w/env")'"

rm -rf "$base" "$SCRATCH"
