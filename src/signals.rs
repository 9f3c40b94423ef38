//! Termination signals in the front ends: SIGTERM, SIGHUP and SIGINT end the lab with exit
//! status 128 + the signal number (143, 129, 130), as a shell reports a process a signal
//! ended, after putting the terminal back as it was. The dashboard notices them in its loop
//! (see `tui::run_until_signal`); `run`, the plain REPL and the line editor block in reads,
//! so a thread of their own waits for the signal ([`exit_on_signals`]). Every line a
//! front end finished is already saved (history and progress are written line by line).

/// The signals that end a session.
#[cfg(unix)]
pub const SIGNALS: [i32; 3] = [
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGINT,
];

/// The exit status for a session a signal ended: 128 + its number.
pub fn exit_status(signal: i32) -> u8 {
    u8::try_from(128 + signal.clamp(0, 127)).unwrap_or(255)
}

/// From now on, the first SIGTERM, SIGHUP or SIGINT restores the terminal settings stdin
/// has now (if it is a terminal: the line editor's raw mode is undone) and exits the process
/// with [`exit_status`]. A thread waits for the signal, so this works while the front end
/// is blocked reading a line or running a command.
pub fn exit_on_signals() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        let saved = if std::io::stdin().is_terminal() {
            rustix::termios::tcgetattr(std::io::stdin()).ok()
        } else {
            None
        };
        let mut signals = signal_hook::iterator::Signals::new(SIGNALS)?;
        std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    if let Some(t) = &saved {
                        let _ = rustix::termios::tcsetattr(
                            std::io::stdin(),
                            rustix::termios::OptionalActions::Now,
                            t,
                        );
                    }
                    // Real mode: the namespaces the session made go before the process.
                    crate::real_cni::shutdown_for_signal();
                    std::process::exit(i32::from(exit_status(sig)));
                }
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn exit_status_is_128_plus_the_signal() {
        assert_eq!(super::exit_status(15), 143);
        assert_eq!(super::exit_status(1), 129);
        assert_eq!(super::exit_status(2), 130);
    }
}
