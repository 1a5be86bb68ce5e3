//! The application in process, for tests that drive the library's web or
//! API handlers without a polld (tests/store/write_path.rs,
//! tests/properties/web.rs): the limits that are not under test are opened
//! wide, so a verdict never depends on a throttle.

use std::sync::Arc;
use std::time::Duration;

use anonpoll::app::{App, VoteLimits};
use anonpoll::ratelimit::RateLimiter;
use anonpoll::store::Store;

/// The public address the in-process application names in its links.
pub const IN_PROCESS_BASE_URL: &str = "http://polls.test";

/// An `App` over `store` with no creation limit and no vote budget to speak
/// of (`u32::MAX` per window).
pub fn unthrottled_app(store: Store) -> Arc<App> {
    let limiter = Arc::new(RateLimiter::new(u32::MAX, Duration::from_secs(3600)).unwrap());
    let votes = VoteLimits { per_window: u32::MAX, window: Duration::from_secs(600), per_network_day: 0 };
    Arc::new(App::new(store, limiter, votes, IN_PROCESS_BASE_URL).unwrap())
}
