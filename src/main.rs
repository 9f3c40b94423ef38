//! The `cni-csi-lab` binary: picks a front end.

use clap::{Parser, Subcommand};
use cni_csi_lab::Lab;
use cni_csi_lab::script::{self, RunOptions};
use std::io::{BufRead, IsTerminal, Read, Write};
use std::process::ExitCode;

/// A terminal lab for Kubernetes networking (CNI) and storage (CSI).
#[derive(Debug, Parser)]
#[command(name = "cni-csi-lab", version, about, long_about = None)]
struct Cli {
    /// Start with no nodes (instead of node-1 and node-2)
    #[arg(long, global = true)]
    empty: bool,
    /// What to run (default: an interactive session)
    #[command(subcommand)]
    command: Option<Mode>,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// Run a script of lab commands (FILE, or - for stdin)
    Run {
        /// The script file, or - for stdin
        file: String,
        /// Keep going after a failing command
        #[arg(long)]
        keep_going: bool,
        /// Print each command before its output
        #[arg(long)]
        echo: bool,
    },
    /// An interactive session (line by line)
    Repl,
    /// The live dashboard: topology, IPAM, routes, volumes, calls and wire, with a command line
    Dash {
        /// High-contrast theme with thicker borders, for a projector
        #[arg(long)]
        big: bool,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let mut lab = if cli.empty { Lab::empty() } else { Lab::new() };
    match cli.command {
        Some(Mode::Run {
            file,
            keep_going,
            echo,
        }) => run_file(&mut lab, &file, RunOptions { keep_going, echo }),
        Some(Mode::Repl) => repl(&mut lab),
        Some(Mode::Dash { big }) => {
            match cni_csi_lab::tui::run(lab, cni_csi_lab::tui::Options::from_env(big)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
        None if std::io::stdin().is_terminal() => repl(&mut lab),
        None => run_file(&mut lab, "-", RunOptions::default()),
    }
}

fn run_file(lab: &mut Lab, file: &str, opts: RunOptions) -> ExitCode {
    let text = if file == "-" {
        let mut s = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut s) {
            eprintln!("error: cannot read stdin: {e}");
            return ExitCode::from(2);
        }
        s
    } else {
        match std::fs::read_to_string(file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot read {file}: {e}");
                return ExitCode::from(2);
            }
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    match script::run(lab, &text, opts, &mut stdout.lock(), &mut stderr.lock()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn repl(lab: &mut Lab) -> ExitCode {
    println!(
        "cni-csi-lab {} — type `help` for commands, Ctrl-D to quit",
        env!("CARGO_PKG_VERSION")
    );
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        print!("lab> ");
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => {
                println!();
                return ExitCode::SUCCESS;
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(1);
            }
        }
        let trimmed = line.trim();
        if matches!(trimmed, "quit" | "exit" | "q") {
            return ExitCode::SUCCESS;
        }
        match lab.execute(trimmed) {
            Ok(out) => print!("{}", out.to_text()),
            Err(e) => {
                print!("{}", e.output.to_text());
                eprintln!("error: {}", e.message);
            }
        }
    }
}
