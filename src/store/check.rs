//! `pollctl check`'s look at every poll: each opened whole, its ballot rows
//! checked against the digest its counts carry, and its counts against a
//! recount of its ballots.
//!
//! Why: someone who can write to the database could delete a ballot row,
//! or put back an older sealed value at its own place (a changed ballot's
//! first answers, older counts); each still opens, since it was sealed
//! there. The digest and the recount say so, per poll, by name.

use crate::day::Day;
use crate::error::Error;
use crate::keyring::Keyring;

use super::engine::ReadConn;
use super::rows;
use super::seen::Seen;
use super::vocab::FORMAT;
use super::writer::mix::open_image;

/// A poll that does not check out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollCheck {
    pub poll: String,
    pub problem: String,
}

/// Checks every poll of the database behind `conn` (one snapshot each).
pub(super) fn check_all(conn: &mut dyn ReadConn, keys: &Keyring, today: Day) -> anyhow::Result<Vec<PollCheck>> {
    let mut leases = Vec::new();
    conn.once(&mut |rows| {
        leases = rows.leases()?;
        Ok(())
    })?;
    let mut old = Vec::new();
    conn.once(&mut |rows| {
        old = rows.polls_of_format(FORMAT - 1)?;
        Ok(())
    })?;
    let mut found = Vec::new();
    for lease in leases {
        if old.contains(&lease.id) {
            found.push(PollCheck { poll: lease.id, problem: "its values are of an earlier format".into() });
            continue;
        }
        let mut problem = None;
        let outcome = conn.snapshot(&mut |rows| {
            problem = check_one(rows, keys, &lease.id, today)?;
            Ok(())
        });
        if let Err(e) = outcome {
            problem = Some(match e {
                Error::Internal(e) => format!("{e:#}"),
                other => other.to_string(),
            });
        }
        if let Some(problem) = problem {
            found.push(PollCheck { poll: lease.id, problem });
        }
    }
    Ok(found)
}

/// What is wrong with poll `id`, if anything (an `Err` is a problem too).
fn check_one(
    rows: &mut dyn super::engine::Rows,
    keys: &Keyring,
    id: &str,
    today: Day,
) -> Result<Option<String>, Error> {
    // Expired polls are checked too, until the sweep erases them.
    let _ = today;
    let Some(image) = open_image(rows, keys, &Seen::default(), id, None)? else { return Ok(None) };
    let mut recount = rows::empty_tallies(&image.layout);
    for (_, stored) in &image.ballots {
        rows::tally(&mut recount, &image.layout, &stored.ballot, Some(stored.day), 1)?;
    }
    if recount != image.state.tallies {
        return Ok(Some(format!(
            "its counts ({} ballots) are not a recount of its {} stored ballots",
            image.state.tallies.total,
            image.ballots.len()
        )));
    }
    let issued = rows.codes_issued(id)?;
    if image.state.spent_count() > issued {
        return Ok(Some(format!("{} codes counted as used, of {issued} issued", image.state.spent_count())));
    }
    Ok(None)
}
