//! A thread's scheduling priority (its nice value), moved by the thread
//! itself.
//!
//! Why: where the cores are short, the kernel serves threads by their
//! weight, and polld's threads do not matter alike. The
//! writer, whose next batch every vote waits for, runs first where it may
//! (`daemon::WRITER_RAISE`). On Linux a nice value belongs to a thread, so
//! each sets its own as it starts.
//!
//! Promises: only the calling thread changes (threads it starts afterwards
//! inherit its value, as on Linux they do). Lowering a thread is always
//! allowed; raising it above the process's priority needs CAP_SYS_NICE or
//! an RLIMIT_NICE that reaches that far (systemd's `LimitNICE=`). A refusal
//! (or a sandbox without setpriority) is returned, for the caller to say
//! once, and leaves the thread as it was.

use std::sync::atomic::{AtomicBool, Ordering};

/// [`shift_own`], and on a refusal `warning` (given the reason) on stderr,
/// once per `said`: a refusal changes nothing else, but an operator should
/// learn it.
pub fn shift_own_or_say(by: i32, said: &AtomicBool, warning: impl FnOnce(&std::io::Error) -> String) {
    if let Err(e) = shift_own(by)
        && !said.swap(true, Ordering::Relaxed)
    {
        eprintln!("{}", warning(&e));
    }
}

/// The calling thread's nice value (for tests: polld only shifts it).
#[cfg(test)]
pub(crate) fn own() -> std::io::Result<i32> {
    Ok(rustix::process::getpriority_process(Some(rustix::thread::gettid()))?)
}

/// Moves the calling thread `by` nice steps (negative: a higher priority),
/// within the kernel's -20..=19; its new nice value.
pub fn shift_own(by: i32) -> std::io::Result<i32> {
    let me = Some(rustix::thread::gettid());
    let to = (rustix::process::getpriority_process(me)? + by).clamp(-20, 19);
    rustix::process::setpriority_process(me, to)?;
    Ok(to)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Field 19 of /proc/thread-self/stat: this thread's nice value, as the
    /// kernel reports it elsewhere than getpriority.
    fn nice_in_proc() -> i32 {
        let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
        // The name (field 2) is in parentheses and may hold spaces.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        after.split_whitespace().nth(16).unwrap().parse().unwrap()
    }

    /// Whether this process may raise a thread's priority by `by` (root,
    /// or an RLIMIT_NICE that reaches that far): tried on a thread of its own.
    fn may_raise(by: i32) -> bool {
        std::thread::spawn(move || shift_own(-by).is_ok()).join().unwrap()
    }

    #[test]
    fn a_thread_lowers_its_own_priority_and_no_other_threads() {
        let before = nice_in_proc();
        assert_eq!(own().unwrap(), before);
        let lowered = std::thread::spawn(|| (shift_own(5).unwrap(), nice_in_proc())).join().unwrap();
        assert_eq!(lowered, ((before + 5).min(19), (before + 5).min(19)));
        assert_eq!(nice_in_proc(), before, "the spawning thread keeps its priority");
    }

    #[test]
    fn a_thread_raises_its_own_priority_where_allowed_and_is_told_where_not() {
        let before = nice_in_proc();
        let allowed = may_raise(3);
        let (result, after) = std::thread::spawn(|| (shift_own(-3), nice_in_proc())).join().unwrap();
        if allowed {
            assert_eq!(result.unwrap(), (before - 3).max(-20));
            assert_eq!(after, (before - 3).max(-20));
        } else {
            assert!(result.is_err(), "a refused raise is reported");
            assert_eq!(after, before, "a refused raise leaves the thread as it was");
        }
        assert_eq!(nice_in_proc(), before, "the spawning thread keeps its priority");
    }
}
