# test/lib.sh — shared steps of test/run and test/demo (sourced, not run).
#
# wp_install_deps   apt-get install what is missing (sudo when not root);
#                   its arguments are more packages (WP_TAP_PACKAGES ...)
# wp_build_install  build with -Werror and install the extension
# runas / owner     how to run postgres as an unprivileged user
#
# WP_PGROOT=/some/dir  builds, installs and tests against a private,
# relocated copy of the server installation made there on first use: no
# sudo is needed for "make install", and several checkouts can be tested
# side by side without overwriting each other's installed walpilot.
#
# WP_PG_CONFIG=/path/to/pg_config  the installation to use instead of
# Debian's /usr/lib/postgresql/$PGVER (an installation of its own, such as
# test/pgbuild's assert-enabled build); its major version is taken from
# it.  With WP_PGROOT, the private copy is of that installation.

# WP_PGVER: the server's major version (15 here; 17 and 18 in the chroots
# of test/chroot, where test/versions sets it).
PGVER=${WP_PGVER:-15}
PGBIN=/usr/lib/postgresql/$PGVER/bin
if [ -n "${WP_PG_CONFIG:-}" ]; then
	PGBIN=$("$WP_PG_CONFIG" --bindir) &&
		PGVER=$("$WP_PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/') ||
		{ echo "test/lib.sh: WP_PG_CONFIG=$WP_PG_CONFIG is no pg_config" >&2; exit 1; }
fi
WP_PACKAGES="postgresql-$PGVER postgresql-server-dev-$PGVER postgresql-$PGVER-pg-wait-sampling postgresql-contrib libipc-run-perl libfaketime locales make gcc python3"
# what only the TAP tests need (test/run and test/versions install them,
# test/demo does not): Patroni and etcd for the Patroni test
WP_TAP_PACKAGES="patroni etcd-server"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi

# wp_private_root: (re)use a relocated copy of the server under WP_PGROOT.
# An installation given by WP_PG_CONFIG is copied whole to $WP_PGROOT/pg
# (PostgreSQL finds its directories relative to its binaries), again when
# the copy is of another installation or an older build of it.
wp_private_root()
{
	local r=$WP_PGROOT prefix stamp
	if [ -n "${WP_PG_CONFIG:-}" ]; then
		prefix=$(cd "$("$WP_PG_CONFIG" --bindir)/.." && pwd) || return 1
		stamp="$prefix $(stat -c %Y "$prefix/bin/postgres")"
		if [ ! -x "$r/pg/bin/postgres" ] || [ "$(cat "$r/pg/.walpilot-copy-of" 2>/dev/null)" != "$stamp" ]; then
			rm -rf "$r/pg" && mkdir -p "$r" || return 1
			cp -a "$prefix" "$r/pg.new.$$" && echo "$stamp" > "$r/pg.new.$$/.walpilot-copy-of" &&
				mv "$r/pg.new.$$" "$r/pg" || return 1
			chmod 755 "$r"
		fi
		PGBIN=$r/pg/bin
		sudo_cmd=()
		return 0
	fi
	if [ ! -x "$r/usr/lib/postgresql/$PGVER/bin/postgres" ]; then
		mkdir -p "$r/usr/lib/postgresql" "$r/usr/share/postgresql" || return 1
		cp -a "/usr/lib/postgresql/$PGVER" "$r/usr/lib/postgresql/" || return 1
		cp -a "/usr/share/postgresql/$PGVER" "$r/usr/share/postgresql/" || return 1
		ln -sfn /usr/include "$r/usr/include"
		chmod 755 "$r"
	fi
	# message catalogs, for tests with a translated lc_messages
	[ -e "$r/usr/share/locale" ] || ln -sfn /usr/share/locale "$r/usr/share/locale"
	PGBIN=$r/usr/lib/postgresql/$PGVER/bin
	sudo_cmd=()
}

PG_CONFIG=$PGBIN/pg_config
# wp_pgxs_dir: the installation's pgxs tree (pg_regress, the TAP modules
# under src/test/perl): Debian's lib/pgxs, or wherever pg_config says
wp_pgxs_dir() { local m; m=$("$PG_CONFIG" --pgxs) && echo "${m%/src/makefiles/pgxs.mk}"; }
export PATH="$PGBIN:$PATH"

# postgres refuses to run as root: run servers and clients as "postgres".
if [ "$(id -u)" -eq 0 ]; then
	runas=(runuser -u postgres --)
	owner=postgres
else
	runas=()
	owner=$(id -un)
fi

# wp_free_port: a TCP port on this machine that nothing listens on now.
wp_free_port()
{
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && continue
		echo "$p"
		return 0
	done
	echo 54329
}

log() { printf '\n== %s  [%s]\n' "$*" "$(date -u +%H:%M:%S)"; }

wp_install_deps()
{
	local missing=() p
	for p in $WP_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		log "installing ${missing[*]}"
		# another install may hold apt's lock (CI fetches the ecosystem
		# checks' packages in the background): wait for it
		"${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 update -qq || return 1
		DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 \
			install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
	fi
	# a locale with a PostgreSQL translation, for the lc_messages tests
	locale -a 2>/dev/null | grep -qx 'de_DE.utf8' ||
		"${sudo_cmd[@]}" localedef -i de_DE -f UTF-8 de_DE.UTF-8 2>/dev/null || true
	return 0
}

# wp_build_install SRCDIR
wp_build_install()
{
	local src=$1
	if [ -n "${WP_PGROOT:-}" ]; then
		wp_private_root || return 1
		PG_CONFIG=$PGBIN/pg_config
		export PATH="$PGBIN:$PATH"
	fi
	log "building with -Werror ${WP_COPT:+$WP_COPT }($PG_CONFIG)"
	make -C "$src" -s clean PG_CONFIG=$PG_CONFIG >/dev/null || return 1
	make -C "$src" -s -j"$(nproc)" PG_CONFIG=$PG_CONFIG COPT="-Werror ${WP_COPT:-}" || return 1
	"${sudo_cmd[@]}" make -C "$src" -s install PG_CONFIG=$PG_CONFIG >/dev/null || return 1
	if [ -f "$src/test/emulator/Makefile" ]; then
		make -C "$src/test/emulator" -s || return 1
	fi
}
