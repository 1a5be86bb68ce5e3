//! `pollctl check`'s look at every poll: each opened whole, its ballot rows
//! checked against the digest its counts carry, and its counts against a
//! recount of its ballots.
//!
//! Why: someone who can write to the database could delete a ballot row,
//! or put back an older sealed value at its own place (a changed ballot's
//! first answers, older counts); each still opens, since it was sealed
//! there. The digest and the recount say so, per poll, by name.

use crate::error::Error;
use crate::keyring::Keyring;

use super::engine::ReadConn;
use super::open::open_image;
use super::rows;
use super::seen::Seen;
use super::vocab::FORMAT;

/// A poll that does not check out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollCheck {
    pub poll: String,
    pub problem: String,
}

/// Checks every poll of the database behind `conn` (one snapshot each).
pub(super) fn check_all(conn: &mut dyn ReadConn, keys: &Keyring) -> anyhow::Result<Vec<PollCheck>> {
    let mut ids = Vec::new();
    conn.once(&mut |rows| {
        ids = rows.poll_ids()?;
        Ok(())
    })?;
    let mut old = Vec::new();
    conn.once(&mut |rows| {
        old = rows.polls_of_format(FORMAT - 1)?;
        Ok(())
    })?;
    let mut found = Vec::new();
    for id in ids {
        if old.contains(&id) {
            found.push(PollCheck {
                poll: id,
                problem: "the upgrade could not bring it to format 2 (polld's start names why)".into(),
            });
            continue;
        }
        let mut problem = None;
        let outcome = conn.snapshot(&mut |rows| {
            problem = check_one(rows, keys, &id)?;
            Ok(())
        });
        if let Err(e) = outcome {
            problem = Some(match e {
                Error::Internal(e) => format!("{e:#}"),
                other => other.to_string(),
            });
        }
        if let Some(problem) = problem {
            found.push(PollCheck { poll: id, problem });
        }
    }
    Ok(found)
}

/// What is wrong with poll `id`, if anything (an `Err` is a problem too).
/// Expired polls are checked too, until the sweep erases them.
fn check_one(rows: &mut dyn super::engine::Rows, keys: &Keyring, id: &str) -> Result<Option<String>, Error> {
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
