//! The day's key work as the application runs it, and what `/healthz` says
//! of it.

use super::*;

/// A day's key work that fails (here: the key file cannot be written) is
/// reported by `/healthz` until the work succeeds; polld goes on serving
/// meanwhile, and stays in its balancer's rotation.
#[test]
fn a_failed_days_key_work_is_reported_until_it_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("t.sqlite3");
    let keys = dir.path().join("keys").join("t.keys");
    let store = Store::open_db(&db, &crate::store::Keys::at(&keys), Default::default()).unwrap();
    let app = Arc::new(App::offline(store, "http://127.0.0.1:8080").unwrap());
    let mut session = app.session().unwrap();
    let today = Day::today();
    let fit = |key_day, key_work_failed| Fitness { key_day, key_work_failed };
    assert_eq!(session.healthy(today).unwrap(), fit(today, false));
    // The key file's place taken by a folder: the state cannot move on.
    let aside = dir.path().join("aside.keys");
    std::fs::rename(&keys, &aside).unwrap();
    std::fs::create_dir(&keys).unwrap();
    let tomorrow = today.next();
    assert!(app.roll_keys(tomorrow).is_err());
    assert_eq!(session.healthy(tomorrow).unwrap(), fit(today, true));
    // Today (not behind) nothing is amiss whatever failed: the failure is
    // about a day not reached.
    assert_eq!(session.healthy(today).unwrap(), fit(today, false));
    // Fixed: the next try succeeds and /healthz says so.
    std::fs::remove_dir(&keys).unwrap();
    std::fs::rename(&aside, &keys).unwrap();
    app.roll_keys(tomorrow).unwrap();
    assert_eq!(session.healthy(tomorrow).unwrap(), fit(tomorrow, false));
}
