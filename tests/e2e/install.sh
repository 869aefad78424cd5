#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# `make install` puts the service's unit and config where systemd and the unit
# look for them, never replaces an admin's config, and the installed unit
# passes systemd-analyze verify.
. "$(dirname "$0")/lib.sh"

cd "$OFFCPU_ROOT" || exit 1
D="$SCRATCH/root"
# An outer make (make check) must not hand its flags and variables to these.
# BUILD as the top Makefile names it (relative): a compile here writes its
# dependency file under that name, and one under an absolute name is not the
# object's, so a later `make` would miss a changed header (the BPF skeleton).
BUILD_REL=$(realpath --relative-to="$OFFCPU_ROOT" "$OFFCPU_BUILD")
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u PREFIX -u DESTDIR -u SYSTEMDUNITDIR -u SYSCONFDIR \
		make -s --no-print-directory BUILD="$BUILD_REL" "$@" >"$SCRATCH/make.out" 2>&1
}

if ! mk install DESTDIR="$D"; then
	fail install_service_files "make install DESTDIR failed: $(tail -n 3 "$SCRATCH/make.out")"
else
	unit="$D/usr/local/lib/systemd/system/offcpu.service"
	conf="$D/etc/offcpu/offcpu.conf"
	if [ ! -f "$unit" ] || [ ! -f "$conf" ]; then
		fail install_service_files "no $unit or no $conf"
	elif ! grep -qx 'ExecStart=/usr/local/bin/offcpu record -a --config /etc/offcpu/offcpu.conf' "$unit"; then
		fail install_service_files "ExecStart does not name the installed binary and config: $(grep ExecStart "$unit")"
	elif grep -q '@[A-Z]*@' "$unit"; then
		fail install_service_files "placeholders left in the unit: $(grep '@[A-Z]*@' "$unit")"
	elif ! cmp -s "$conf" share/offcpu.conf; then
		fail install_service_files "the installed config differs from share/offcpu.conf"
	elif [ "$(stat -c %a "$unit") $(stat -c %a "$conf")" != "644 644" ]; then
		fail install_service_files "modes $(stat -c %a "$unit") $(stat -c %a "$conf"), expected 644"
	else
		ok install_service_files
	fi
fi

# A second install keeps the admin's edited config and puts the shipped one beside it.
echo "every = 5m" >>"$D/etc/offcpu/offcpu.conf"
cp "$D/etc/offcpu/offcpu.conf" "$SCRATCH/edited.conf"
if ! mk install DESTDIR="$D"; then
	fail install_keeps_config "the second make install failed: $(tail -n 3 "$SCRATCH/make.out")"
elif ! cmp -s "$D/etc/offcpu/offcpu.conf" "$SCRATCH/edited.conf"; then
	fail install_keeps_config "the edited config was replaced"
elif ! cmp -s "$D/etc/offcpu/offcpu.conf.dist" share/offcpu.conf; then
	fail install_keeps_config "no offcpu.conf.dist holding the shipped config"
elif ! mk uninstall DESTDIR="$D"; then
	fail install_keeps_config "make uninstall failed: $(tail -n 3 "$SCRATCH/make.out")"
elif [ -e "$D/usr/local/lib/systemd/system/offcpu.service" ] || [ ! -e "$D/etc/offcpu/offcpu.conf" ]; then
	fail install_keeps_config "uninstall left the unit or removed the admin's config"
else
	ok install_keeps_config
fi

# A distribution's PREFIX=/usr puts the unit in /usr/lib/systemd/system.
if ! mk install-service DESTDIR="$SCRATCH/distro" PREFIX=/usr; then
	fail install_prefix_usr "make install-service PREFIX=/usr failed: $(tail -n 3 "$SCRATCH/make.out")"
elif ! grep -qx 'ExecStart=/usr/bin/offcpu record -a --config /etc/offcpu/offcpu.conf' \
	"$SCRATCH/distro/usr/lib/systemd/system/offcpu.service" 2>/dev/null; then
	fail install_prefix_usr "no unit in /usr/lib/systemd/system naming /usr/bin/offcpu"
else
	ok install_prefix_usr
fi

# systemd-analyze verify wants the ExecStart binary present: install into a
# prefix of our own (no DESTDIR) so the unit names a binary that exists.
if ! command -v systemd-analyze >/dev/null; then
	skip install_unit_verifies "no systemd-analyze here (Debian: systemd)"
else
	P="$SCRATCH/prefix"
	if ! mk install-service PREFIX="$P" SYSCONFDIR="$P/etc"; then
		fail install_unit_verifies "make install-service failed: $(tail -n 3 "$SCRATCH/make.out")"
	else
		mkdir -p "$P/bin" && cp "$OFFCPU_BIN" "$P/bin/offcpu"
		out=$(systemd-analyze verify --man=no "$P/lib/systemd/system/offcpu.service" 2>&1)
		rc=$?
		# Any line is a warning (an unknown key only warns): none is allowed.
		if [ $rc -ne 0 ] || [ -n "$out" ]; then
			fail install_unit_verifies "systemd-analyze verify: rc $rc: $(echo "$out" | head -n 3 | tr '\n' ' ')"
		else
			ok install_unit_verifies
		fi
	fi
fi

# The unit's sandbox leaves the collector what it needs. systemd cannot run
# here, so its settings are rebuilt by hand around a host-wide record: the
# unit's CapabilityBoundingSet (read from the unit) and NoNewPrivileges
# (setpriv), ProtectSystem=strict with one ReadWritePaths (/ read-only, the
# output directory bound writable), ProtectKernelTunables (/sys and
# /proc/sys read-only), and a workload binary that offcpu's own mount view
# does not show (as under PrivateTmp or ProtectHome): its frames must still
# be named, through /proc/PID of the workload.
t=service_sandbox_records_host
mount_tracefs
if ! need_root; then
	skip $t "needs root to load BPF programs"
elif ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null; then
	skip $t "needs setpriv and unshare (Debian: util-linux)"
else
	S="$SCRATCH/sandbox"
	mkdir -p "$S/hidden" "$S/out"
	cp "$W/hung" "$S/hidden/zzsvc_hung"
	"$S/hidden/zzsvc_hung" ticker >"$S/ready" &
	hung=$!
	for _ in $(seq 50); do [ -s "$S/ready" ] && break; sleep 0.1; done
	caps=$(sed -n 's/^CapabilityBoundingSet=//p' share/offcpu.service | tr ' ' '\n' |
		sed -n 's/^CAP_\(.*\)/+\L\1/p' | paste -sd,)
	unshare -m --propagation private sh -ec '
		mount --bind "$1/out" "$1/out"
		mount -t tmpfs tmpfs "$1/hidden"
		mount -o remount,bind,ro /
		mount --bind /sys /sys && mount -o remount,bind,ro /sys
		mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys
		[ ! -e "$1/hidden/zzsvc_hung" ]
		exec setpriv --no-new-privs --bounding-set "-all,$2" --inh-caps=-all \
			"$3" record -a -d 1s -q -o "$1/out/p"' sh "$S" "$caps" "$OFFCPU_BIN" \
		>"$S/log" 2>&1
	rc=$?
	kill "$hung" 2>/dev/null
	wait "$hung" 2>/dev/null
	P="$S/out/p/offcpu.profile.txt"
	if [ -z "$caps" ]; then
		fail $t "no CapabilityBoundingSet= in share/offcpu.service"
	elif [ $rc -ne 0 ] || [ ! -s "$P" ]; then
		fail $t "record -a in the sandbox ($caps) failed ($rc): $(tail -n 2 "$S/log" | tr '\n' ' ')"
	elif ! grep -q ' u hung_read$' "$P" || ! grep -q ' u idle_wait$' "$P"; then
		fail $t "the hidden workload's frames are not named (hung_read, idle_wait): $(grep -c ' u ' "$P") user frames"
	elif ! grep -q ' k schedule$' "$P"; then
		fail $t "kernel frames are not named (no 'schedule'): $(grep ' k ' "$P" | head -n 2 | tr '\n' ' ')"
	else
		ok $t
	fi
fi
