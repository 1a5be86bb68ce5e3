//! What polld and pollctl do first, before they read a key: keep the keys
//! they will hold out of core dumps and away from other processes.
//!
//! Why in the program: a process that crashes writes its memory to a core
//! file where the system is set up to keep them, and a data key or a chain
//! key in that memory would outlive its poll in that file. The shipped unit
//! sets `LimitCORE=0`, but polld is also run by hand, from a container, or
//! by a unit of the operator's own; pollctl runs from cron and shells.
//!
//! Promises: the process is not dumpable (`PR_SET_DUMPABLE` 0: no core
//! file, and no other process of the same user may attach to it or read its
//! memory) and its core file limit is 0, before any key is read. Where the
//! kernel refuses, the caller is told and says so; nothing else changes.

/// Makes this process undumpable and its core size limit zero.
pub fn no_core_dumps() -> std::io::Result<()> {
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    let none = rustix::process::Rlimit { current: Some(0), maximum: Some(0) };
    rustix::process::setrlimit(rustix::process::Resource::Core, none)?;
    Ok(())
}

/// [`no_core_dumps`], or a warning on stderr naming `program`.
pub fn no_core_dumps_or_say(program: &str) {
    if let Err(e) = no_core_dumps() {
        eprintln!("{program}: cannot keep this process out of core dumps ({e}); keys could reach a core file");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_is_undumpable_with_no_core_size_after_it() {
        no_core_dumps().unwrap();
        assert_eq!(rustix::process::dumpable_behavior().unwrap(), rustix::process::DumpableBehavior::NotDumpable);
        let limit = rustix::process::getrlimit(rustix::process::Resource::Core);
        assert_eq!((limit.current, limit.maximum), (Some(0), Some(0)));
        let limits = std::fs::read_to_string("/proc/self/limits").unwrap();
        let core = limits.lines().find(|l| l.starts_with("Max core file size")).unwrap();
        assert_eq!(core.split_whitespace().filter(|w| *w == "0").count(), 2, "{core}");
    }
}
