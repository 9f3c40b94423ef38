//! The `cni-csi-lab` binary: picks a front end. Exit codes: 0 success, 1 a command failed,
//! 2 bad usage (unknown flag, unreadable file, unknown preset), 128+n ended by signal n
//! (SIGTERM 143, SIGHUP 129, SIGINT 130). Results go to stdout,
//! errors to stderr.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use cni_csi_lab::ansi::ColorChoice;
use cni_csi_lab::repl::{self, Options};
use cni_csi_lab::{Desk, Lab};
use lab_engine::script::{self, RunOptions};
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

/// mimalloc: the engine allocates many small strings; this allocator handles that pattern
/// markedly faster than glibc's (see BENCHMARKS.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A terminal lab for Kubernetes networking (CNI) and storage (CSI).
///
/// With no command: an interactive session on a terminal, or a script read from stdin.
#[derive(Debug, Parser)]
#[command(name = "cni-csi-lab", version, about, long_about = None)]
#[command(after_help = "Examples:
  cni-csi-lab                          the dashboard on a terminal (`repl` for a line REPL)
  cni-csi-lab run lesson.lab           run a script; stops at the first failing command
  echo 'node list' | cni-csi-lab       a script on stdin
  cni-csi-lab --preset three-nodes     start with three nodes
  cni-csi-lab --preset dc-1000         start with 1,000 nodes (/24 podCIDRs, four zones)
  cni-csi-lab --preset k8s-limits      start with 5,000 nodes, Kubernetes' published limit
  cni-csi-lab --conflist my.conflist   start with your own CNI config on every node
  cni-csi-lab --network flannel-vxlan  start with flannel's VXLAN backend (default host-gw)
  cni-csi-lab --network calico-bgp     start with Calico (BGP, NetworkPolicy enforced by Felix)
  cni-csi-lab --multus                 start with Multus on top of the network (pods with --networks)
  cni-csi-lab --cni-plugins 1.1.1      start with Debian bookworm's plugins (spec up to 1.0.0, no GC/STATUS)
  cni-csi-lab --load lab.json          start from a lab saved with `save lab.json`
  sudo cni-csi-lab --real-cni          the real plugins (/usr/lib/cni) beside the model, compared")]
struct Cli {
    /// Start with no nodes (same as --preset empty)
    #[arg(
        long,
        global = true,
        help_heading = "Lab options",
        conflicts_with = "preset"
    )]
    empty: bool,
    /// The starting cluster: default, empty, single-node, three-nodes, multus, sriov (an SR-IOV
    /// node), dc-1000 (1,000 nodes), k8s-limits (5,000 nodes), or a FILE of lab commands run on
    /// an empty lab
    #[arg(
        long,
        global = true,
        help_heading = "Lab options",
        value_name = "NAME|FILE"
    )]
    preset: Option<String>,
    /// A CNI config to start with, copied into every node's /etc/cni/net.d
    /// ({{.PodCIDR}} is filled per node)
    #[arg(long, global = true, help_heading = "Lab options", value_name = "FILE")]
    conflist: Option<String>,
    /// The network implementation: flannel-host-gw (the default), flannel-vxlan, calico-bgp
    /// or cilium
    #[arg(long, global = true, help_heading = "Lab options", value_name = "NAME", value_parser = ["flannel-host-gw", "flannel-vxlan", "calico-bgp", "cilium"])]
    network: Option<String>,
    /// The release of containernetworking/plugins the nodes run (`cni plugins`): 1.9.1,
    /// the current upstream release (the default), or 1.1.1, Debian bookworm's build
    #[arg(long, global = true, help_heading = "Lab options", value_name = "VERSION", value_parser = lab_engine::command::grammar::plugins_releases())]
    cni_plugins: Option<String>,
    /// Start from a lab saved with `save FILE` (replayed and checked; a damaged or newer
    /// file is refused)
    #[arg(long, global = true, help_heading = "Lab options", value_name = "FILE", conflicts_with_all = ["preset", "empty", "conflist", "network", "multus", "cni_plugins"])]
    load: Option<String>,
    /// Record the session into an asciicast v2 file (asciinema plays it): the REPL, the
    /// dashboard, or `lesson play ID` with the lesson's pacing
    #[arg(
        long,
        global = true,
        help_heading = "Lab options",
        value_name = "FILE.cast"
    )]
    record: Option<std::path::PathBuf>,
    /// Install Multus (thin) on top of the network at start (`network multus on`)
    #[arg(long, global = true, help_heading = "Lab options")]
    multus: bool,
    /// Read lessons from this directory instead of the built-in ones (for lesson authors)
    #[arg(long, global = true, help_heading = "Lab options", value_name = "DIR")]
    lessons: Option<String>,
    /// Colours in the interactive session (NO_COLOR turns `auto` off); scripts are plain
    #[arg(long, global = true, help_heading = "Lab options", value_enum, default_value_t = ColorArg::Auto)]
    color: ColorArg,
    /// Also run the real CNI plugin binaries for every CNI call, in network namespaces the
    /// lab creates (one per node, one per pod), and compare their answers with the model's
    /// (root only; everything it creates is removed on exit, `reset` or a signal)
    #[arg(long, global = true, help_heading = "Lab options")]
    real_cni: bool,
    /// With --real-cni: the directory of the real plugins (default /usr/lib/cni, else
    /// /opt/cni/bin)
    #[arg(
        long,
        global = true,
        help_heading = "Lab options",
        value_name = "DIR",
        requires = "real_cni"
    )]
    cni_bin_dir: Option<std::path::PathBuf>,
    /// What to run (default: an interactive session)
    #[command(subcommand)]
    command: Option<Front>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
enum Front {
    /// Run a script of lab commands (FILE, or - for stdin); exit 1 if a command fails
    Run {
        /// The script file, or - for stdin
        file: String,
        /// Keep going after a failing command (the exit code still reports it)
        #[arg(long)]
        keep_going: bool,
        /// Print each command before its output
        #[arg(long)]
        echo: bool,
        /// Play it for a class: each `# comment` shown as a caption, each command typed
        /// out, and Enter to go on to the next (q then Enter stops)
        #[arg(long, conflicts_with_all = ["pace", "keep_going", "echo"])]
        step: bool,
        /// Play it for a class, pausing this long after each command (e.g. 2s, 500ms)
        #[arg(long, value_name = "DURATION", value_parser = lab_engine::util::time::parse_tick, conflicts_with_all = ["keep_going", "echo"])]
        pace: Option<lab_engine::util::time::Millis>,
    },
    /// An interactive session
    Repl {
        /// No line editing: read stdin line by line (for pipes and tests)
        #[arg(long)]
        plain: bool,
    },
    /// Run one `lesson …` command and exit, e.g. `cni-csi-lab lesson lint` or
    /// `cni-csi-lab lesson verify ch7-hands-on`
    Lesson {
        /// The words after `lesson`
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<String>,
    },
    /// Grade homework: replay a learner's submission (`lesson submit FILE` in the lab) or a
    /// script on a fresh lab and print each step's result; exit 0 when every step is done
    /// and the submission claims nothing its lines do not do, 1 otherwise, 2 when it
    /// cannot be read
    #[command(after_help = "Examples:
  cni-csi-lab grade --lesson ch2-core-ideas alice.json
  cni-csi-lab grade --lesson ch2-core-ideas --json alice.json > alice-verdict.json
  cni-csi-lab grade --lesson ch7-hands-on homework.lab      a script: its lines after `lesson start`
  cni-csi-lab grade --lesson ch7-hands-on --variant 12 bob.json   the variant Bob was given

Of the Lab options, grade takes --lessons DIR (the lessons the class used); the others shape
a session's lab, and grade replays on a fresh lab, as the lesson starts.")]
    Grade {
        /// The lesson to grade against (see `lesson list`)
        #[arg(long, value_name = "ID")]
        lesson: String,
        /// The variant this student was given (`lesson start ID --variant N`): a submission
        /// of another variant fails. Without it, the submission's own variant is graded (a
        /// script's is the one its `lesson start` line names, else 0)
        #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = lab_engine::command::grammar::whole_u32)]
        variant: Option<u32>,
        /// Print the verdict as JSON (per step: done with the line that did it, skipped or
        /// missing; per quiz; the totals)
        #[arg(long)]
        json: bool,
        /// The submission (JSON written by `lesson submit`) or a script of lab commands
        submission: String,
    },
    /// Print a shell completion script for this CLI
    Completions {
        /// The shell
        shell: clap_complete::Shell,
    },
    /// The lab's CSI driver over real gRPC, e.g. `cni-csi-lab csi serve --socket /tmp/csi.sock`
    Csi {
        /// What to do
        #[command(subcommand)]
        cmd: CsiFront,
    },
    /// The live dashboard: topology, IPAM, routes, volumes, calls and wire, with a command line
    Dash {
        /// Thicker borders and more spacing, for a projector (high contrast unless --theme
        /// says otherwise; composes with --theme and NO_COLOR)
        #[arg(long)]
        big: bool,
        /// The colours: dark (the default, on the terminal's background), light (dark text
        /// on white, for a bright room) or high-contrast (bright on black)
        #[arg(long, value_name = "THEME", value_parser = ["dark", "light", "high-contrast"])]
        theme: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
enum CsiFront {
    /// Serve hostpath.csi.lab (Identity, Controller and Node of CSI v1) on a gRPC unix
    /// socket, with server reflection, while the lab runs in this process; each call prints
    /// its call-log line; Ctrl-C (SIGINT) or SIGTERM stops it and removes the socket
    #[command(after_help = "Examples:
  cni-csi-lab csi serve --socket /tmp/csi.sock
  grpcurl -plaintext -unix /tmp/csi.sock csi.v1.Identity/GetPluginInfo
  csc identity plugin-info --endpoint unix:///tmp/csi.sock")]
    Serve {
        /// The unix socket to listen on
        #[arg(long, value_name = "PATH")]
        socket: std::path::PathBuf,
        /// The node whose node plugin answers the Node service (default: the first node)
        #[arg(long, value_name = "NODE")]
        node: Option<String>,
    },
}

fn main() -> ExitCode {
    // Real mode: every namespace, link and file the session made goes when main ends, on a
    // panic too (a no-op otherwise; signals are handled in `util::signals`).
    let _real_cni = RealCniCleanup;
    run_lab()
}

/// Ends a real-mode session (`cni::real::shutdown`) when dropped.
struct RealCniCleanup;

impl Drop for RealCniCleanup {
    fn drop(&mut self) {
        cni_csi_lab::real_cni::shutdown();
    }
}

/// The options that shape the lab a session starts with, which `grade` does not take: it
/// replays on a fresh default lab, as a lesson starts (`--lessons` it takes).
const LAB_START_OPTIONS: &[&str] = &[
    "empty",
    "preset",
    "conflist",
    "network",
    "cni_plugins",
    "load",
    "record",
    "multus",
    "color",
    "real_cni",
    "cni_bin_dir",
];

/// `grade` given an option that shapes a session's lab: which, and what it takes instead.
fn refuse_lab_options_for_grade(m: &clap::ArgMatches) -> Option<String> {
    let ("grade", sub) = m.subcommand()? else {
        return None;
    };
    let given: Vec<String> = LAB_START_OPTIONS
        .iter()
        .filter(|id| {
            sub.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
                || m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
        })
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    (!given.is_empty()).then(|| {
        format!(
            "grade replays a submission on a fresh lab, as the lesson starts, and takes no {}: it takes --lesson ID, --variant N, --json, --lessons DIR and the file",
            given.join(", ")
        )
    })
}

fn run_lab() -> ExitCode {
    let matches = Cli::command().try_get_matches();
    if let Ok(m) = &matches
        && let Some(why) = refuse_lab_options_for_grade(m)
    {
        print_error(why);
        return ExitCode::from(2);
    }
    let cli = match matches.and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayVersion => {
            // clap prints the version as soon as it meets the flag, whatever follows it.
            let args: Vec<String> = std::env::args().skip(1).collect();
            if let [flag] = args.as_slice()
                && (flag == "--version" || flag == "-V")
            {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            print_error(format!(
                "--version takes no other arguments (given: {}); run `cni-csi-lab --version` alone",
                args.join(" ")
            ));
            return ExitCode::from(2);
        }
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    if cli.record.is_some()
        && matches!(
            cli.command,
            Some(Front::Completions { .. } | Front::Csi { .. } | Front::Grade { .. })
        )
    {
        // Every front end that takes --record records; these have nothing to record.
        print_error(
            "--record records the dashboard, the REPL, `run FILE` and `lesson play ID`; not `completions`, `csi serve` or `grade`",
        );
        return ExitCode::from(2);
    }
    if let Some(Front::Grade {
        lesson,
        variant,
        json,
        submission,
    }) = &cli.command
    {
        return grade(lesson, *variant, *json, submission, cli.lessons.as_deref());
    }
    if let Some(Front::Completions { shell }) = cli.command {
        let script = cni_csi_lab::shell_completion::script(shell, Cli::command(), "cni-csi-lab");
        let _ = std::io::stdout().write_all(script.as_bytes());
        return ExitCode::SUCCESS;
    }
    let stdin_is_terminal = std::io::stdin().is_terminal();
    let dashboard_front = match &cli.command {
        Some(Front::Dash { .. }) => true,
        None => stdin_is_terminal && std::io::stdout().is_terminal(),
        _ => false,
    };
    let serving = matches!(cli.command, Some(Front::Csi { .. }));
    if !dashboard_front && !serving {
        // SIGTERM/SIGHUP/SIGINT end `run`, `lesson` and the REPLs with 128+n, the terminal
        // restored (the dashboard handles them in its loop).
        if let Err(e) = cni_csi_lab::signals::exit_on_signals() {
            print_error(format!("cannot watch for signals: {e}"));
        }
    }
    // What a crashed real-mode session left in the kernel goes at the next start.
    // Said as a note when done, a warning when something stays (not an error: the lab
    // starts either way).
    for line in cni_csi_lab::real_cni::clean_stale() {
        eprintln!("{}", lab_engine::render::escape_controls(&line.to_string()));
    }
    if cli.real_cni {
        let enabled = cni_csi_lab::real_cni::preflight(cli.cni_bin_dir.as_deref())
            .and_then(cni_csi_lab::real_cni::enable);
        if let Err(e) = enabled {
            print_error(&e);
            return ExitCode::from(2);
        }
    }
    let mut desk = match starting_desk(&cli) {
        Ok(desk) => desk,
        Err(e) => {
            print_error(&e);
            return ExitCode::from(2);
        }
    };
    let choice = match cli.color {
        ColorArg::Auto => ColorChoice::Auto,
        ColorArg::Always => ColorChoice::Always,
        ColorArg::Never => ColorChoice::Never,
    };
    let no_color = std::env::var("NO_COLOR").ok();
    let opts = Options {
        color_out: choice.enabled(std::io::stdout().is_terminal(), no_color.as_deref()),
        color_err: choice.enabled(std::io::stderr().is_terminal(), no_color.as_deref()),
        history: repl::history::path(),
        record: cli.record.clone(),
        wrap: std::io::stdout().is_terminal(),
    };
    if let Some(dir) = &cli.lessons {
        let dir = cni_csi_lab::lesson_dir::Dir(std::path::PathBuf::from(dir));
        if let Err(e) = desk.lessons.use_dir(std::sync::Arc::new(dir)) {
            print_error(&e);
            return ExitCode::from(2);
        }
    }
    // `cni-csi-lab lesson list` from a shell shows the learner's own progress.
    let lists_lessons = matches!(
        &cli.command,
        Some(Front::Lesson { args }) if args.first().is_some_and(|a| a == "list")
    );
    let interactive = (matches!(
        cli.command,
        Some(Front::Repl { .. } | Front::Dash { .. }) | None
    ) && stdin_is_terminal)
        || lists_lessons;
    match cni_csi_lab::progress_file::store_from_env() {
        // `CNI_CSI_LAB_PROGRESS=FILE`: that file, in every front end (empty: memory).
        Some(Some(store)) => desk.lessons.set_store(Box::new(store)),
        Some(None) => {}
        None if interactive => {
            // A learner's progress is kept in the user's data directory; scripts keep it in
            // memory.
            if let Some(store) = cni_csi_lab::progress_file::FileStore::user_default() {
                desk.lessons.set_store(Box::new(store));
            }
        }
        // A REPL fed by a pipe or a file is not a learner's session: say so when a lesson
        // starts instead of showing progress it will not keep.
        None if matches!(cli.command, Some(Front::Repl { .. })) => {
            desk.lessons
                .set_store(Box::new(lab_engine::lesson::MemoryStore::because(
                    PIPED_PROGRESS,
                )))
        }
        None => {}
    }
    match cli.command {
        Some(Front::Lesson { args }) => {
            // `lesson play ID --record FILE.cast`: the flag may follow the lesson's words.
            let (args, record) = match take_record_flag(args) {
                Ok((a, r)) => (a, r.or(cli.record.clone())),
                Err(e) => {
                    print_error(&e);
                    return ExitCode::from(2);
                }
            };
            let line = format!(
                "lesson {}",
                shlex::try_join(args.iter().map(String::as_str)).unwrap_or_default()
            );
            // `lesson lint` and `lesson verify` play every lesson (lint at several variants)
            // before they print: on a terminal, a line says so, so a wait is not a hang.
            if matches!(args.first().map(String::as_str), Some("lint" | "verify"))
                && std::io::stderr().is_terminal()
            {
                eprintln!(
                    "playing each lesson's steps on a fresh cluster to check them (a minute or more; the report follows)…"
                );
            }
            match &record {
                Some(cast) => record_lesson_play(&mut desk, &line, cast),
                None => run_one(&mut desk, &line),
            }
        }
        Some(Front::Run {
            file, step, pace, ..
        }) if step || pace.is_some() => play_file(
            &mut desk,
            &file,
            step,
            pace,
            opts.color_out,
            cli.record.as_deref(),
        ),
        Some(Front::Run {
            file,
            keep_going,
            echo,
            ..
        }) => {
            let code = run_file(
                &mut desk,
                &file,
                RunOptions { keep_going, echo },
                cli.record.as_deref(),
            );
            end_without_drop(desk);
            code
        }
        Some(Front::Repl { plain }) if plain || !stdin_is_terminal => plain_repl(desk, &opts),
        Some(Front::Repl { .. }) => line_editor(desk, &opts),
        Some(Front::Dash { big, theme }) => dashboard(desk, big, theme.as_deref(), cli.record),
        // No command on a terminal: the dashboard (the line REPL is `cni-csi-lab repl`).
        None if stdin_is_terminal && std::io::stdout().is_terminal() => {
            dashboard(desk, false, None, cli.record)
        }
        None if stdin_is_terminal => line_editor(desk, &opts),
        None => {
            // stdin is not a terminal: its lines are a script, as `run -` reads it. Said on
            // a terminal's stderr before it is read (a pipe that stays open would otherwise
            // look like a hang), and whenever it held no command.
            if std::io::stderr().is_terminal() {
                eprintln!("{STDIN_SCRIPT}");
            }
            let code = run_file(&mut desk, "-", RunOptions::default(), cli.record.as_deref());
            end_without_drop(desk);
            code
        }
        Some(Front::Completions { .. } | Front::Grade { .. }) => ExitCode::SUCCESS,
        Some(Front::Csi {
            cmd: CsiFront::Serve { socket, node },
        }) => csi_serve(&mut desk.lab, socket, node),
    }
}

/// The script has run and the process ends next: the lab's memory goes back with the
/// process instead of object by object (dropping a `--preset dc-1000` lab took a twentieth
/// of its start-up). Nothing in a desk writes on drop: output is flushed as it goes, lesson
/// progress and history are written line by line.
fn end_without_drop(desk: Desk) {
    std::mem::forget(desk);
}

/// `csi serve`: the driver on a gRPC socket until a signal (exit 128+n); 2 when it cannot
/// serve (bad node, socket path taken).
#[cfg(unix)]
fn csi_serve(lab: &mut Lab, socket: std::path::PathBuf, node: Option<String>) -> ExitCode {
    let opts = cni_csi_lab::csi_serve::ServeOptions { socket, node };
    match cni_csi_lab::csi_serve::run(lab, &opts, &mut std::io::stdout()) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            print_error(&e);
            ExitCode::from(2)
        }
    }
}

#[cfg(not(unix))]
fn csi_serve(_: &mut Lab, _: std::path::PathBuf, _: Option<String>) -> ExitCode {
    print_error("csi serve needs unix sockets (Linux, macOS)");
    ExitCode::from(2)
}

/// The lab the flags ask for: a save (`--load`), or a preset (or `--empty`), then
/// `--conflist`; the embedded lessons beside it.
fn starting_desk(cli: &Cli) -> Result<Desk, String> {
    if let Some(file) = &cli.load {
        let mut lab = Lab::read_save(&cni_csi_lab::files::Disk, file)
            .map_err(|e| format!("cannot load {e}"))?;
        // A save is replayed by the model alone; real mode takes over from here.
        lab.set_edges(edges());
        return Ok(Desk::with_lab(lab));
    }
    let preset = match (&cli.preset, cli.empty) {
        (Some(p), _) => p.as_str(),
        (None, true) => "empty",
        (None, false) => "default",
    };
    let mut desk = lab_engine::presets::build_desk(preset, edges())?;
    if let Some(release) = &cli.cni_plugins {
        // Journaled like a typed command, so `save` replays it.
        desk.execute(&format!("cni plugins {release}"))
            .map_err(|e| format!("--cni-plugins: {}", e.message))?;
    }
    if let Some(name) = &cli.network {
        // Journaled like a typed command, so `save` replays it.
        desk.execute(&format!("network use {name}"))
            .map_err(|e| format!("--network: {}", e.message))?;
    }
    if let Some(file) = &cli.conflist {
        load_conflist(&mut desk, file)?;
    }
    if cli.multus {
        // After --network and --conflist: the entrypoint takes the primary config it finds.
        desk.execute("network multus on")
            .map_err(|e| format!("--multus: {}", e.message))?;
    }
    Ok(desk)
}

/// What a terminal session gives the engine: the disk, and real mode's plugins when
/// `--real-cni` turned it on.
fn edges() -> lab_engine::edge::Edges {
    lab_engine::edge::Edges {
        files: std::sync::Arc::new(cni_csi_lab::files::Disk),
        real: cni_csi_lab::real_cni::handle(),
    }
}

/// `--conflist FILE`: `cni conf load FILE` on every node. The runtime uses the first file
/// in lexical order, so a file that would sort after the lab's own is loaded as
/// `00-<name>` (and the note says so).
fn load_conflist(desk: &mut Desk, file: &str) -> Result<(), String> {
    if desk.lab.counts().0 == 0 {
        return Err(format!(
            "--conflist {file}: the lab has no nodes to copy it to; use a preset with nodes"
        ));
    }
    let base = std::path::Path::new(file)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(file)
        .to_string();
    let first_existing = desk.lab.first_conf_file().map(str::to_string);
    let mut line = format!(
        "cni conf load {}",
        shlex::try_quote(file).map_err(|e| format!("--conflist {file}: {e}"))?
    );
    let mut note = None;
    if let Some(first) = first_existing.filter(|f| base.as_str() > f.as_str()) {
        let renamed = format!("00-{base}");
        line.push_str(&format!(
            " --as {}",
            shlex::try_quote(&renamed).map_err(|e| format!("--conflist {file}: {e}"))?
        ));
        note = Some(format!(
            "note: loaded as {renamed}: the runtime uses the first file in lexical order, and {base} sorts after {first}"
        ));
    }
    let out = desk
        .execute(&line)
        .map_err(|e| format!("--conflist: {}", e.message))?;
    eprint!("{}", out.to_text());
    if let Some(n) = note {
        eprintln!("{}", lab_engine::render::escape_controls(&n));
    }
    Ok(())
}

/// `error: …` on stderr, control characters escaped (see `render::escape`): messages
/// quote file names, flags and lines from outside.
fn print_error(e: impl std::fmt::Display) {
    eprintln!(
        "error: {}",
        lab_engine::render::escape_controls(&e.to_string())
    );
}

fn line_editor(desk: Desk, opts: &Options) -> ExitCode {
    match repl::run(desk, opts) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e);
            ExitCode::from(1)
        }
    }
}

fn plain_repl(mut desk: Desk, opts: &Options) -> ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    match repl::run_plain(
        &mut desk,
        &mut stdin.lock(),
        opts,
        &mut stdout.lock(),
        &mut stderr.lock(),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e);
            ExitCode::from(1)
        }
    }
}

fn run_file(
    desk: &mut Desk,
    file: &str,
    opts: RunOptions,
    record: Option<&std::path::Path>,
) -> ExitCode {
    let text = if file == "-" {
        // Capped like a script file (`cat /dev/zero | cni-csi-lab run -` must not exhaust
        // memory); one byte more than the cap is read to tell "at the cap" from "over it".
        let cap = cni_csi_lab::files::SCRIPT_CAP;
        let mut s = String::new();
        if let Err(e) = std::io::stdin().take(cap + 1).read_to_string(&mut s) {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        if s.len() as u64 > cap {
            eprintln!(
                "error: cannot read stdin: over the {} limit for a script",
                cni_csi_lab::files::human_size(cap)
            );
            return ExitCode::from(2);
        }
        let s = match s.strip_prefix('\u{feff}') {
            Some(rest) => rest.to_string(),
            None => s,
        };
        if !s
            .lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        {
            eprintln!("{NO_COMMANDS_ON_STDIN}");
        }
        s
    } else {
        let read = cni_csi_lab::files::read_capped(
            std::path::Path::new(file),
            "a script",
            cni_csi_lab::files::SCRIPT_CAP,
        );
        match read {
            Ok(s) => s,
            Err(e) => {
                print_error(format!("cannot read {file}: {e}"));
                return ExitCode::from(2);
            }
        }
    };
    run_file_text(desk, &text, opts, record.map(|r| (r, file)))
}

/// `--record FILE.cast` for a front end that prints to stdout and stderr: the recording,
/// made before anything runs (an error reads normally and nothing runs).
fn start_recording(
    path: &std::path::Path,
    title: &str,
) -> Result<cni_csi_lab::cast::Shared, ExitCode> {
    let (w, h) = crossterm::terminal::size().unwrap_or((100, 30));
    cni_csi_lab::cast::shared(path, w, h, title).map_err(|e| {
        print_error(&e);
        ExitCode::from(2)
    })
}

/// `run FILE --step|--pace D`: the script played for a class (see `script::plan`): its
/// comments as captions, each command typed out, then Enter or the pause. Exit 1 when a
/// command did not end as written.
fn play_file(
    desk: &mut Desk,
    file: &str,
    step: bool,
    pace: Option<lab_engine::util::time::Millis>,
    color: bool,
    record: Option<&std::path::Path>,
) -> ExitCode {
    let text = match cni_csi_lab::files::read_capped(
        std::path::Path::new(file),
        "a script",
        cni_csi_lab::files::SCRIPT_CAP,
    ) {
        Ok(s) => s,
        Err(e) => {
            print_error(format!("cannot read {file}: {e}"));
            return ExitCode::from(2);
        }
    };
    let pace = match (step, pace) {
        (true, _) => script::Pace::Step,
        (false, Some(p)) => script::Pace::Every(p.as_ms()),
        (false, None) => script::Pace::Every(script::DEFAULT_PACE_MS),
    };
    let mut term = cni_csi_lab::repl::playback::TerminalSink { color };
    let mut recorded;
    let sink: &mut dyn lab_engine::lesson::play::PlaySink = match record {
        Some(path) => match start_recording(path, &format!("cni-csi-lab run {file}")) {
            Ok(cast) => {
                recorded = cni_csi_lab::cast::RecordedSink {
                    inner: &mut term,
                    cast,
                    color,
                };
                &mut recorded
            }
            Err(code) => return code,
        },
        None => &mut term,
    };
    if desk.play_events(script::plan(&text, pace), sink, false) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// `grade --lesson ID [--json] SUBMISSION`: the submission's lines (or the script's) replayed
/// on a fresh lab with the lessons (`--lessons DIR` when given); the verdict printed.
fn grade(
    lesson: &str,
    variant: Option<u32>,
    json: bool,
    file: &str,
    lessons: Option<&str>,
) -> ExitCode {
    use lab_engine::lesson::grade::{self, Submission};
    // The lesson first: a grader's typo is named as such, whatever the file holds.
    let mut known = lab_engine::lesson::Lessons::default();
    if let Some(dir) = lessons {
        let dir = cni_csi_lab::lesson_dir::Dir(std::path::PathBuf::from(dir));
        if let Err(e) = known.use_dir(std::sync::Arc::new(dir)) {
            print_error(&e);
            return ExitCode::from(2);
        }
    }
    if let Err(e) = known.find(lesson) {
        print_error(&e);
        return ExitCode::from(2);
    }
    let text = match cni_csi_lab::files::read_capped(
        std::path::Path::new(file),
        "a submission",
        cni_csi_lab::files::SCRIPT_CAP.max(cni_csi_lab::files::CONFIG_CAP),
    ) {
        Ok(s) => s,
        Err(e) => {
            print_error(format!("cannot read {file}: {e}"));
            return ExitCode::from(2);
        }
    };
    // A submission is JSON naming its format; anything else is a script of lab commands.
    let looks_like_json = text.trim_start().starts_with('{');
    let (edges, lines, claimed, written_by, recorded): (_, Vec<(usize, String)>, _, _, _) =
        if looks_like_json {
            let sub = match Submission::parse(&text) {
                Ok(s) => s,
                Err(e) => {
                    print_error(format!("{file}: {e}"));
                    return ExitCode::from(2);
                }
            };
            if sub.lesson != lesson {
                print_error(format!(
                    "{file} is a submission for lesson {}, not {lesson}",
                    sub.lesson
                ));
                return ExitCode::from(2);
            }
            let edges = lab_engine::edge::Edges::files(std::sync::Arc::new(sub.files()));
            let lines = (1..)
                .zip(sub.lines.iter().map(|l| l.line.clone()))
                .collect();
            (
                edges,
                lines,
                Some(sub.claimed),
                Some(sub.lab_version),
                Some(sub.variant),
            )
        } else {
            let lines = lab_engine::script::commands(&text);
            let disk = lab_engine::edge::Edges::files(std::sync::Arc::new(
                cni_csi_lab::files::ReadOnlyDisk,
            ));
            let own = grade::script_variant(lesson, &lines);
            (disk, lines, None, None, own)
        };
    // A variant the file names (not the grader) that the lesson does not have: the file's.
    if let (None, Some(r)) = (variant, recorded)
        && known.find_variant(lesson, r).is_err()
    {
        print_error(format!(
            "{file} names variant {r}, which lesson {lesson} does not have: the file was edited, or made with other lessons (name the class's with --lessons DIR)"
        ));
        return ExitCode::from(2);
    }
    let mut desk = Desk::with_lab(Lab::with_edges(Lab::new, edges));
    desk.lessons = known;
    let verdict = match grade::replay(
        &mut desk,
        lesson,
        grade::variant_to_grade(variant, recorded),
        &lines,
        claimed.as_ref(),
        written_by.as_deref(),
    ) {
        Ok(v) => v,
        Err(e) => {
            print_error(&e.message);
            return ExitCode::from(2);
        }
    };
    let shown = if json {
        serde_json::to_string_pretty(&verdict.to_json()).unwrap_or_default() + "\n"
    } else {
        verdict.render().to_text()
    };
    let _ = std::io::stdout().write_all(shown.as_bytes());
    end_without_drop(desk);
    if verdict.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// One command from the shell (`cni-csi-lab lesson …`): its output on stdout, an error as
/// `error: …` on stderr (no script line number: there is no script), exit 1 when it fails
/// and 2 when the line is bad usage (an unknown flag, a bad value such as `--speed abc`).
fn run_one(desk: &mut Desk, line: &str) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let plain = Options::default();
    let result = desk.execute(line);
    let usage =
        matches!(&result, Err(e) if e.reason == lab_engine::engine::Reason::Usage && !e.is_help);
    match repl::print_result(result, &plain, &mut stdout.lock(), &mut stderr.lock()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) if usage => ExitCode::from(2),
        Ok(false) => ExitCode::from(1),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e);
            ExitCode::from(1)
        }
    }
}

/// Run script text with plain output (recorded into `record`'s file, titled after the
/// script, when given).
fn run_file_text(
    desk: &mut Desk,
    text: &str,
    opts: RunOptions,
    record: Option<(&std::path::Path, &str)>,
) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let ran = match record {
        Some((path, file)) => {
            let cast = match start_recording(path, &format!("cni-csi-lab run {file}")) {
                Ok(c) => c,
                Err(code) => return code,
            };
            let mut out = cni_csi_lab::cast::SharedTee::new(stdout.lock(), cast.clone());
            let mut err = cni_csi_lab::cast::SharedTee::new(stderr.lock(), cast);
            script::run(desk, text, opts, &mut out, &mut err)
        }
        None => script::run(desk, text, opts, &mut stdout.lock(), &mut stderr.lock()),
    };
    match ran {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            print_error(&e);
            ExitCode::from(1)
        }
    }
}

/// The live dashboard.
/// `--record FILE` (or `--record=FILE`) taken out of the words after `lesson`.
fn take_record_flag(
    args: Vec<String>,
) -> Result<(Vec<String>, Option<std::path::PathBuf>), String> {
    let mut rest = Vec::new();
    let mut record = None;
    let mut words = args.into_iter();
    while let Some(w) = words.next() {
        if w == "--record" {
            let file = words
                .next()
                .ok_or("--record needs a file: --record FILE.cast")?;
            record = Some(std::path::PathBuf::from(file));
        } else if let Some(file) = w.strip_prefix("--record=") {
            record = Some(std::path::PathBuf::from(file));
        } else {
            rest.push(w);
        }
    }
    Ok((rest, record))
}

/// `cni-csi-lab lesson play ID --record FILE.cast`: the playback written to an asciicast
/// with the lesson's pacing (typing and pauses on a virtual clock: done in a moment, the
/// same file every time). Only `lesson play` records; the file is 100×30.
fn record_lesson_play(desk: &mut Desk, line: &str, cast: &std::path::Path) -> ExitCode {
    use lab_engine::command::{Command, grammar::LessonCmd, parse};
    let (id, opts) = match parse(line) {
        Ok(Some(Command::Lesson(LessonCmd::Play {
            id,
            speed,
            step,
            variant,
        }))) => (
            id,
            lab_engine::lesson::play::PlayOptions {
                speed,
                step,
                variant,
            },
        ),
        Ok(_) => {
            print_error(
                "--record records `lesson play ID`, the REPL and the dashboard; run other lesson commands without it",
            );
            return ExitCode::from(2);
        }
        Err(
            lab_engine::command::ParseError::Help(h) | lab_engine::command::ParseError::Invalid(h),
        ) => {
            print_error(h.trim_start_matches("error: "));
            return ExitCode::from(2);
        }
    };
    // The lesson first: a typo in its id leaves an existing FILE alone, as `run --record`
    // does (the speed was checked as the line parsed).
    if let Err(e) = desk.lessons.find_variant(&id, opts.variant) {
        print_error(&e);
        return ExitCode::from(1);
    }
    let file = match cni_csi_lab::cast::Cast::create(cast, 100, 30, &format!("lesson {id}")) {
        Ok(f) => f,
        Err(e) => {
            print_error(&e);
            return ExitCode::from(2);
        }
    };
    let mut sink = cni_csi_lab::cast::CastSink::new(file);
    let played = desk.lesson_play_live(&id, opts, &mut sink);
    let seconds = sink.duration();
    if let Err(e) = played {
        // Nothing was played: no half-written recording is left behind.
        drop(sink);
        let _ = std::fs::remove_file(cast);
        print_error(&e.message);
        return ExitCode::from(1);
    }
    if let Err(e) = sink.finish() {
        print_error(&e);
        return ExitCode::from(1);
    }
    println!(
        "recorded lesson {id} into {} ({seconds:.0} s; play it with `asciinema play {}`)",
        cast.display(),
        cast.display()
    );
    ExitCode::SUCCESS
}

fn dashboard(
    desk: Desk,
    big: bool,
    theme: Option<&str>,
    record: Option<std::path::PathBuf>,
) -> ExitCode {
    let palette = cni_csi_lab::tui::Palette::ALL
        .iter()
        .find(|(name, _)| Some(*name) == theme)
        .map(|(_, p)| *p);
    let options = cni_csi_lab::tui::Options {
        record,
        palette,
        ..cni_csi_lab::tui::Options::from_env(big)
    };
    match cni_csi_lab::tui::run_until_signal(desk, options) {
        Ok(None) => ExitCode::SUCCESS,
        // Ended by SIGTERM, SIGHUP or SIGINT: 128 + the signal, the terminal restored.
        Ok(Some(sig)) => ExitCode::from(cni_csi_lab::signals::exit_status(sig)),
        Err(e) => {
            print_error(&e);
            ExitCode::from(1)
        }
    }
}

/// Why a REPL whose standard input is not a terminal keeps lesson progress in memory.
const PIPED_PROGRESS: &str = "this REPL reads a pipe or a file, not a terminal, so it writes no progress file (run `cni-csi-lab repl` on a terminal, or set CNI_CSI_LAB_PROGRESS=FILE to keep it)";

/// Said on stderr (when it is a terminal) before `cni-csi-lab` with no command reads a
/// script from a stdin that is not a terminal.
const STDIN_SCRIPT: &str = "cni-csi-lab: stdin is not a terminal: running the lab commands read from it as a script (as `run -` does; Ctrl-D ends it). On a terminal, `cni-csi-lab` opens the dashboard and `cni-csi-lab repl` a line REPL.";

/// Said on stderr when the script read from stdin held no command (`cni-csi-lab
/// </dev/null` printed nothing at all).
const NO_COMMANDS_ON_STDIN: &str = "cni-csi-lab: no commands on stdin, nothing to run. With stdin not a terminal the lab runs the commands it reads there as a script (`echo 'node list' | cni-csi-lab`); run it on a terminal for the dashboard, or `cni-csi-lab repl` for a line REPL.";
