//! A real Slurm on this machine: munged, slurmctld and slurmd started from a generated
//! slurm.conf for localhost (no cgroups, state in a temporary directory, ports of its own),
//! the emitted sbatch array of 24 runs submitted, and the collected sweep.csv compared
//! byte for byte with the same sweep run locally.
//!
//! Needs root (slurmd launches jobs as their user) and the Debian packages slurmctld,
//! slurmd, slurm-client and munge, which `.ci/run` installs. Without them the test says
//! SKIP and why; in CI (`CI` set) as root it must run, so a broken setup fails there.

mod sweep_common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use sweep_common::*;

/// How long the daemons get to come up, and the array to finish.
const START_LIMIT: Duration = Duration::from_secs(30);
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// The last lines of a log, for messages.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("({e})"));
    let all: Vec<&str> = text.lines().collect();
    format!(
        "--- {} (last {lines} lines):\n{}",
        path.display(),
        all[all.len().saturating_sub(lines)..].join("\n")
    )
}

fn which(tool: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p)
            .chain(["/usr/sbin".into(), "/sbin".into()])
            .any(|d| d.join(tool).is_file())
    })
}

/// A port nobody listens on now (the daemons bind it a moment later).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The processes whose environment has `var`.
fn with_env(var: &str) -> Vec<u32> {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    procs
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let env = std::fs::read(e.path().join("environ")).ok()?;
            let has = env.split(|&b| b == 0).any(|v| v == var.as_bytes());
            has.then_some(pid)
        })
        .collect()
}

/// The three daemons of a one-node cluster, all children of this process; dropping the
/// cluster cancels its job, stops them by their process ids and removes its directory.
struct Cluster {
    dir: Tmp,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child, PathBuf)>,
    job: Option<String>,
}

impl Cluster {
    fn start() -> Result<Cluster, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root (slurmd starts jobs as their user)".into());
        }
        let missing: Vec<&str> = [
            "munged",
            "slurmctld",
            "slurmd",
            "sbatch",
            "squeue",
            "sinfo",
            "scancel",
        ]
        .into_iter()
        .filter(|t| !which(t))
        .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not installed (apt-get install slurmctld slurmd slurm-client munge)",
                missing.join(", ")
            ));
        }
        let dir = Tmp::new("slurm");
        let d = dir.path().to_path_buf();
        use std::os::unix::fs::PermissionsExt;
        // munged wants its socket's directory searchable by all, writable by its owner only.
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Cluster {
            conf: d.join("slurm.conf"),
            dir,
            daemons: Vec::new(),
            job: None,
        };
        // munge: a key of our own and a socket in our directory; the system's munged (if
        // any) and /etc/munge are left alone.
        let key = d.join("munge.key");
        let mut bytes = vec![0u8; 1024];
        {
            use std::io::Read;
            std::fs::File::open("/dev/urandom")
                .and_then(|mut f| f.read_exact(&mut bytes))
                .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
        }
        std::fs::write(&key, &bytes).unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let socket = d.join("munge.socket");
        c.spawn(
            "munged",
            Command::new("munged").args([
                "--foreground".to_string(),
                "--force".into(),
                format!("--key-file={}", key.display()),
                format!("--socket={}", socket.display()),
                format!("--pid-file={}", d.join("munged.pid").display()),
                format!("--log-file={}", d.join("munged.log").display()),
                format!("--seed-file={}", d.join("munged.seed").display()),
            ]),
        )?;
        c.wait_for("munged's socket", || socket.exists())?;

        let (ctld_port, slurmd_port) = (free_port(), free_port());
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_kib: u64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(1 << 20);
        // Below what slurmd measures, which would otherwise drain the node as "low memory".
        let real_memory = mem_kib / 1024 * 9 / 10;
        std::fs::create_dir_all(d.join("state")).unwrap();
        std::fs::create_dir_all(d.join("spool")).unwrap();
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "ClusterName=ackclocktest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={state}
SlurmdSpoolDir={spool}
SlurmctldPidFile={ctld_pid}
SlurmdPidFile={slurmd_pid}
SlurmctldLogFile={ctld_log}
SlurmdLogFile={slurmd_log}
# No cgroups: processes tracked through /proc, no task binding, no accounting.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Schedule every second, so a short array does not wait on the default minute.
SchedulerParameters=sched_interval=1
NodeName=localhost NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={real_memory} State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
",
            socket = socket.display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            slurmd_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            slurmd_log = p("slurmd.log"),
        );
        std::fs::write(&c.conf, conf).unwrap();
        let conf = c.conf.display().to_string();
        c.spawn(
            "slurmctld",
            Command::new("slurmctld").args(["-D", "-i", "-f", &conf]),
        )?;
        c.spawn(
            "slurmd",
            Command::new("slurmd").args(["-D", "-N", "localhost", "-f", &conf]),
        )?;
        let conf_path = c.conf.clone();
        c.wait_for("the node to be idle in sinfo", || {
            Command::new("sinfo")
                .args(["-h", "-n", "localhost", "-o", "%t"])
                .env("SLURM_CONF", &conf_path)
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        })?;
        Ok(c)
    }

    fn spawn(&mut self, name: &'static str, cmd: &mut Command) -> Result<(), String> {
        let out = self.dir.path().join(format!("{name}.out"));
        let log = std::fs::File::create(&out).unwrap();
        let child = cmd
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        self.daemons.push((name, child, out));
        Ok(())
    }

    /// Waits for `ready`, at most START_LIMIT; on failure the logs say why.
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let started = Instant::now();
        while !ready() {
            let exited = self
                .daemons
                .iter_mut()
                .find_map(|(name, child, _)| Some((*name, child.try_wait().ok()??)));
            if let Some((name, status)) = exited {
                return Err(format!(
                    "{name} exited ({status}) while waiting for {what}\n{}",
                    self.logs()
                ));
            }
            if started.elapsed() > START_LIMIT {
                return Err(format!("no {what} after {START_LIMIT:?}\n{}", self.logs()));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }

    fn logs(&self) -> String {
        let d = self.dir.path();
        let mut files: Vec<PathBuf> = self.daemons.iter().map(|(_, _, out)| out.clone()).collect();
        files.extend(["munged.log", "slurmctld.log", "slurmd.log"].map(|f| d.join(f)));
        files
            .iter()
            .filter(|f| f.exists())
            .map(|f| tail(f, 15))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn client(&self, tool: &str) -> Command {
        let mut c = Command::new(tool);
        c.env("SLURM_CONF", &self.conf);
        c
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(job) = &self.job {
            let _ = self.client("scancel").arg(job).output();
        }
        // Our daemons' environment has SLURM_CONF=our conf, and so have their helpers
        // (slurmctld's slurmscriptd); those still there after the daemons are stopped below.
        // (A job's slurmstepd detaches; once done it is a zombie until init reaps it.)
        let marker = format!("SLURM_CONF={}", self.conf.display());
        // Stop by process id, the last started first; SIGTERM, then SIGKILL after 10 s.
        for (name, child, _) in self.daemons.iter_mut().rev() {
            // SAFETY: kill with a pid of our own child, which has not been reaped yet.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
            }
            let started = Instant::now();
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if started.elapsed() < Duration::from_secs(10) => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        eprintln!("{name} did not stop on SIGTERM: killing it");
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
        for pid in with_env(&marker) {
            eprintln!("process {pid} of our Slurm still there after its daemons: stopping it");
            // SAFETY: kill with the pid of a descendant of our own daemons.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGTERM);
            }
        }
    }
}

#[test]
fn a_slurm_job_array_of_the_emitted_script_collects_the_local_sweep_byte_for_byte() {
    let started = Instant::now();
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            if root && std::env::var_os("CI").is_some() {
                panic!("in CI, as root, the Slurm test must run, but: {why}");
            }
            eprintln!("SKIP a_slurm_job_array...: {why}");
            return;
        }
    };
    let t = Tmp::new("slurm-sweep");
    let (sc, local) = local_sweep(t.path(), 10, 6);
    let plan = plan(
        t.path(),
        &sc,
        6,
        "p",
        &["--emit", "slurm", "--max-parallel", "4"],
    );
    let script = std::fs::read_to_string(plan.join("slurm.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-23%4\n"), "{script}");

    let o = ok(
        "sbatch",
        cluster
            .client("sbatch")
            .args(["--parsable", "slurm.sbatch"])
            .current_dir(&plan)
            .env("ACKCLOCK", env!("CARGO_BIN_EXE_ackclock"))
            .output()
            .unwrap(),
    );
    let job = String::from_utf8_lossy(&o.stdout).trim().to_string();
    assert!(
        job.chars().all(|c| c.is_ascii_digit()) && !job.is_empty(),
        "sbatch said {job:?}"
    );
    let mut cluster = cluster;
    cluster.job = Some(job.clone());

    // Until no task of the array is queued or running, at most RUN_LIMIT.
    let submitted = Instant::now();
    loop {
        let o = ok(
            "squeue",
            cluster
                .client("squeue")
                .args(["-h", "-j", &job, "-o", "%i %T"])
                .output()
                .unwrap(),
        );
        if String::from_utf8_lossy(&o.stdout).trim().is_empty() {
            break;
        }
        assert!(
            submitted.elapsed() < RUN_LIMIT,
            "job {job} not done after {RUN_LIMIT:?}:\n{}\n{}",
            String::from_utf8_lossy(&o.stdout),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    let logs: Vec<PathBuf> = std::fs::read_dir(plan.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let task_logs = || {
        logs.iter()
            .map(|l| tail(l, 5))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(logs.len(), 24, "one log per array task:\n{}", task_logs());
    let o = bin()
        .args(["sweep", "collect"])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "collect after the array: {}\n{}",
        String::from_utf8_lossy(&o.stderr),
        task_logs()
    );
    same_bytes(
        "Slurm job array",
        &std::fs::read(plan.join("sweep.csv")).unwrap(),
        &local,
    );
    eprintln!(
        "Slurm: 24 array tasks in {:.1} s (daemons up and sweep planned in {:.1} s)",
        submitted.elapsed().as_secs_f64(),
        (submitted - started).as_secs_f64()
    );
}
