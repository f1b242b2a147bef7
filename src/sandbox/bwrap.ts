// What a sandboxed command sees, as bubblewrap's arguments: the system read-only (/usr and the few
// /etc files programs need to run: no /home, /root, /var, /srv, /opt or anything else of the host),
// its own copy of the files at /work (the only place it may write besides a bounded /tmp), the
// read-only tool folders it is given, fresh /proc, /dev and /tmp, and namespaces of its own: user
// (no capabilities, no further user namespaces), PID (killing bwrap ends every process in it),
// IPC, UTS, cgroup and, unless the caller allows it, network (then only a loopback of its own).
import { existsSync, lstatSync, readlinkSync } from 'node:fs';

/** Where the copy is mounted inside, and the working directory of the command. */
export const SANDBOX_WORKDIR = '/work';
/** Where tool folders are mounted inside: /tools/<name>. */
export const SANDBOX_TOOLS = '/tools';

/** Top-level system folders that are either links into /usr (merged /usr) or folders of their own. */
const SYSTEM_DIRS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/**
 * The /etc entries a program may need: alternatives (Debian's command links), name resolution and
 * certificates (for a setup step allowed to reach the registries), time zone and media types. Not
 * passwd, shadow, or any application's configuration.
 */
const ETC_ENTRIES = ['alternatives', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'resolv.conf', 'hosts', 'nsswitch.conf', 'host.conf', 'gai.conf', 'localtime', 'mime.types'];

/** Size of the sandbox's /tmp (a tmpfs, counted in memory). */
const TMP_BYTES = 512 * 1024 * 1024;

export interface BwrapMounts {
  /** The folder mounted read-write at /work. */
  workdir: string;
  /** Folders mounted read-only, by the absolute path they get inside. */
  readOnly: { source: string; target: string }[];
  /** Share the host's network (a setup step the operator allowed to reach registries); otherwise none. */
  network: boolean;
  /** The whole environment of the command: nothing of the caller's is inherited. */
  env: Record<string, string>;
}

/** bubblewrap's arguments up to (not including) the command. */
export function bwrapArgs(m: BwrapMounts): string[] {
  const args = [
    '--unshare-user',
    '--disable-userns',
    '--uid', '1000',
    '--gid', '1000',
    '--unshare-pid',
    '--unshare-ipc',
    // A UTS namespace of its own (a build cannot rename the machine) that keeps the machine's host
    // name: setting one needs sethostname, which Podman's default seccomp profile refuses to a
    // container without CAP_SYS_ADMIN, namespace or not, so no sandbox could start there.
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(m.network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--ro-bind', '/usr', '/usr',
  ];
  for (const name of SYSTEM_DIRS) {
    const p = `/${name}`;
    if (!existsSync(p)) continue;
    if (lstatSync(p).isSymbolicLink()) args.push('--symlink', readlinkSync(p), p);
    else args.push('--ro-bind', p, p);
  }
  for (const name of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(TMP_BYTES), '--tmpfs', '/tmp');
  args.push('--bind', m.workdir, SANDBOX_WORKDIR);
  for (const r of m.readOnly) args.push('--ro-bind', r.source, r.target);
  args.push('--chdir', SANDBOX_WORKDIR, '--clearenv');
  for (const [k, v] of Object.entries(m.env)) args.push('--setenv', k, v);
  return args;
}
