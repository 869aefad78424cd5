#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# File safety: offcpu changes the owner only of what it created, replaces only
# regular files, never loses or mixes a capture (a failed record, two records
# at once, a change of mode, a full disk), and always leaves a --json record.
# sudo is simulated as in privileges.sh: SUDO_UID/SUDO_GID in root's environment.
. "$(dirname "$0")/lib.sh"
FAKE="$FAKES/fake_collector"
export OFFCPU_FAKE_STDOUT=$DATA/bcc/nanosleep.folded OFFCPU_FAKE_STDERR=/dev/null

if ! need_root || ! id nobody >/dev/null 2>&1; then
	skip file_safety "needs root and user nobody"
	exit 0
fi
NUID=$(id -u nobody)
NGID=$(id -g nobody)
base=$(mktemp -d /tmp/offcpu-files.XXXXXX)
chmod 0755 "$base"
mnt=""
cleanup() {
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$base" "$SCRATCH"
}
trap cleanup EXIT

# sums DIR: one line per file (name and checksum), to compare captures.
sums() { (cd "$1" && md5sum -- * 2>/dev/null | sort -k2); }

# A good capture to start from, made with the fake collector (no BPF needed).
good_capture() {
	rm -rf "$1"
	mkdir -p "$1"
	"$OFFCPU_BIN" record --tool "$FAKE" -o "$1" -q -- true 2>/dev/null
}

t=sudo_leaves_the_owner_of_an_existing_directory
d=$base/existing
mkdir -m 0755 "$d"
SUDO_UID=$NUID SUDO_GID=$NGID "$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- true
if [ "$(stat -c %u:%g "$d")" != 0:0 ]; then
	fail $t "the existing root directory now belongs to $(stat -c %u:%g "$d")"
elif [ "$(stat -c %u "$d/offcpu.summary.json" 2>/dev/null)" != "$NUID" ] ||
	[ "$(stat -c %u "$d/offcpu.time.txt" 2>/dev/null)" != "$NUID" ]; then
	fail $t "the files offcpu wrote are not the user's: $(ls -ln "$d")"
else
	ok $t
fi

t=sudo_gives_the_json_record_file_it_created_and_no_other
: >"$base/root-owned.json"
SUDO_UID=$NUID SUDO_GID=$NGID "$OFFCPU_BIN" record --tool "$FAKE" -o "$base/j1" -q \
	--json="$base/new.json" -- true
SUDO_UID=$NUID SUDO_GID=$NGID "$OFFCPU_BIN" record --tool "$FAKE" -o "$base/j2" -q \
	--json="$base/root-owned.json" -- true
owners="$(stat -c %u "$base/new.json" 2>&1) $(stat -c %u "$base/root-owned.json")"
if [ "$owners" != "$NUID 0" ]; then
	fail $t "owners of the new and the existing record file: $owners, want $NUID 0"
else
	ok $t
fi

t=sudo_gives_the_directories_it_created_and_no_other
mkdir -m 0755 "$base/top"
SUDO_UID=$NUID SUDO_GID=$NGID "$OFFCPU_BIN" record --tool "$FAKE" -o "$base/top/a/b" -q -- true
owners="$(stat -c %u "$base/top") $(stat -c %u "$base/top/a") $(stat -c %u "$base/top/a/b")"
[ "$owners" = "0 $NUID $NUID" ] && ok $t || fail $t "owners of top, a, b: $owners"

# -o TARGET for flamegraph and export: never replace what is not a regular file.
d=$base/lane
good_capture "$d"
mkfifo "$base/fifo"
ln -s /proc/self/fd/1 "$base/stdout-link"
mknod "$base/null" c 1 3
for cmd in "flamegraph" "export --format speedscope"; do
	for target in fifo stdout-link null; do
		t="${cmd%% *}_refuses_${target//-/_}_as_output"
		type_before=$(stat -c %F "$base/$target")
		# shellcheck disable=SC2086 # $cmd is two words on purpose
		err=$(timeout 10 "$OFFCPU_BIN" $cmd -o "$base/$target" "$d" 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 4 ]; then
			fail "$t" "exit $rc, expected 4 (an output cannot be written): $err"
		elif [ "$(stat -c %F "$base/$target")" != "$type_before" ]; then
			fail "$t" "$target became a $(stat -c %F "$base/$target")"
		elif [ "$(echo "$err" | wc -l)" -ne 1 ] || ! grep -q "not a regular file" <<<"$err"; then
			fail "$t" "expected one clear line, got: $err"
		else
			ok "$t"
		fi
	done
done
t=flamegraph_dash_writes_standard_output
"$OFFCPU_BIN" flamegraph -o - "$d" 2>/dev/null | grep -q "<svg" && ok $t ||
	fail $t "no SVG on stdout"

t=failed_record_keeps_the_earlier_capture
d=$base/keep
good_capture "$d"
before=$(sums "$d")
sh -c 'exit 0' &
gone=$!
wait $gone
rc=1
for p in 0 "$gone"; do # a usage error, a failed start
	"$OFFCPU_BIN" record -o "$d" -q -p "$p" >/dev/null 2>&1 || continue
	rc=0
done
after=$(sums "$d")
if [ $rc -eq 0 ]; then
	fail $t "record -p 0 or -p $gone (gone) succeeded"
elif [ "$before" != "$after" ]; then
	fail $t "the earlier capture changed: $(diff <(echo "$before") <(echo "$after") | tr '\n' ' ')"
else
	ok $t
fi

t=second_record_into_the_same_directory_is_refused
d=$base/busy
good_capture "$d"
"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- sleep 1.5 &
first=$!
# The first holds the lock once its staged files exist.
for _ in $(seq 50); do [ -e "$d/offcpu.diagnostics.txt.new" ] && break; sleep 0.1; done
err=$("$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- touch "$base/second-ran" 2>&1)
rc=$?
wait $first
rc1=$?
if [ $rc -ne 125 ] || [ -e "$base/second-ran" ]; then
	fail $t "the second record exited $rc (ran: $([ -e "$base/second-ran" ] && echo yes || echo no))"
elif ! grep -q "in use by another offcpu record (pid $first)" <<<"$err"; then
	fail $t "unclear message: $err"
elif [ $rc1 -ne 0 ] || [ "$(jq -r .state "$d/offcpu.summary.json")" != summary_written ]; then
	fail $t "the first record was disturbed: exit $rc1"
else
	ok $t
fi

t=another_mode_leaves_no_stale_capture
d=$base/modes
good_capture "$d"
"$OFFCPU_BIN" record --tool /nonexistent/bpftrace -o "$d" -q -- true 2>/dev/null
if [ -e "$d/offcpu.time.txt" ]; then
	fail $t "offcpu.time.txt of the time capture is still there: $(ls "$d")"
elif [ ! -e "$d/offcpu.stacks.txt" ] || [ "$(jq -r .mode "$d/offcpu.summary.json")" != stacks ]; then
	fail $t "no stacks lane: $(ls "$d")"
else
	ok $t
fi

t=json_record_goes_to_its_own_file
d=$base/json
out=$("$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q --json="$base/rec.json" -- printf abc)
if [ "$out" != abc ]; then
	fail $t "the workload's stdout got: $out"
elif [ "$(jq -r .state "$base/rec.json" 2>/dev/null)" != summary_written ]; then
	fail $t "record file: $(cat "$base/rec.json" 2>&1)"
else
	ok $t
fi

t=json_record_goes_to_a_descriptor
out=$("$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q --json=/dev/fd/3 -- printf abc 3>"$base/fd3.json")
if [ "$out" != abc ] || [ "$(jq -r .state "$base/fd3.json" 2>/dev/null)" != summary_written ]; then
	fail $t "stdout: $out; descriptor 3: $(cat "$base/fd3.json")"
else
	ok $t
fi

t=json_record_is_printed_when_the_record_fails
sh -c 'exit 0' &
dead=$!
wait $dead # a pid that no longer names a process: a failed start
out=$("$OFFCPU_BIN" record -o "$base/json-fail" -q --json -p "$dead" 2>/dev/null)
if [ "$(jq -r .state <<<"$out" 2>/dev/null)" != record_failed ] ||
	[ "$(jq -r .caveat_kind <<<"$out")" = null ]; then
	fail $t "got: $out"
else
	ok $t
fi

# A full disk: a small tmpfs, filled after a first good capture.
mnt=$base/small
mkdir "$mnt"
if ! mount -t tmpfs -o size=64k tmpfs "$mnt"; then
	skip full_disk "cannot mount a tmpfs"
	exit 0
fi
fill() { dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null; }

t=full_disk_keeps_the_status_the_earlier_capture_and_says_enospc
d=$mnt/lane
"$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q -- true
before=$(sums "$d")
fill
err=$("$OFFCPU_BIN" record --tool "$FAKE" -o "$d" -q --json="$base/full.json" -- sh -c 'exit 3' 2>&1)
rc=$?
if [ $rc -ne 3 ]; then
	fail $t "exit $rc, expected the workload's 3: $err"
elif ! grep -q "No space left on device" <<<"$err" || ! grep -q "$d/offcpu" <<<"$err"; then
	fail $t "the message does not say ENOSPC and the file: $err"
elif [ "$before" != "$(sums "$d")" ]; then
	fail $t "the earlier capture changed: $(ls -l "$d")"
elif [ "$(jq -r .caveat_kind "$base/full.json")" != write_failed ]; then
	fail $t "record: $(cat "$base/full.json")"
else
	ok $t
fi
rm -f "$mnt/fill"

t=full_disk_native_capture_is_not_half_written
d=$mnt/native
mount_tracefs
if "$OFFCPU_BIN" record -o "$d" -q -- sleep 0.1 2>/dev/null &&
	[ "$(jq -r .state "$d/offcpu.summary.json")" = summary_written ]; then
	before=$(sums "$d")
	fill
	err=$("$OFFCPU_BIN" record -o "$d" -q -- sh -c 'sleep 0.1; exit 4' 2>&1)
	rc=$?
	if [ $rc -ne 4 ]; then
		fail $t "exit $rc, expected the workload's 4: $err"
	elif ! grep -q "cannot write $d/offcpu.*No space left on device" <<<"$err"; then
		fail $t "the message does not say ENOSPC and the file: $err"
	elif [ "$before" != "$(sums "$d")" ]; then
		fail $t "the earlier capture changed: $(ls -l "$d")"
	else
		ok $t
	fi
else
	skip $t "the native collector does not run here"
fi
