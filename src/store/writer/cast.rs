//! The vote: the writer's hot path.
//!
//! A vote is checked whole against what may have changed since it was
//! admitted (the poll open, invite-only or not, its code unused), then
//! counted in memory (counts, the digest of the ballots, the code's bit)
//! and stored in one `INSERT`. Nothing else is written for it: the poll's
//! counts, sealed, go once per batch ([`super::cache`]).

use crate::day::Day;
use crate::domain::Ballot;
use crate::error::{Error, InviteRefusal};
use crate::secret::{InviteHash, PollId, ReceiptHash};

use super::super::engine::Rows;
use super::super::keys::{Digest, random_key, receipt_tag, staged_key};
use super::super::rows::{self, Tag};
use super::super::vocab::place;
use super::{Outcome, Writer};

impl Writer {
    /// Records one vote: every check first, then its one write, staged
    /// (see [`super::mix`]); its counts in memory until the batch's flush.
    /// The ballot was checked against the poll's questions before it was
    /// queued; what may have changed since is whether the poll is open,
    /// whether it takes votes by invite, and (while it had no ballot) the
    /// structure of its questions (`read_at`: how many times it had changed
    /// when the ballot was read, where known), so that is checked here.
    pub(super) fn cast(
        &mut self,
        tx: &mut dyn Rows,
        id: &PollId,
        (ballot, read_at): (&Ballot, Option<u32>),
        (invite, receipt): (Option<InviteHash>, Option<ReceiptHash>),
        today: Day,
    ) -> Result<Outcome, Error> {
        let Some(poll) = self.polls.get(tx, &self.keys, &self.seen, id)?.filter(|p| today < p.expires_on) else {
            return Err(Error::NotFound);
        };
        if poll.is_closed(today) {
            return Err(Error::Closed);
        }
        // Its options' indexes would mean other answers now, or none.
        if read_at.is_some_and(|n| n != poll.restructured) {
            return Err(Error::PollChanged);
        }
        // The poll may have turned invite-only since the vote was admitted.
        if poll.invite_only && invite.is_none() {
            return Err(Error::InviteRefused(InviteRefusal::Missing));
        }
        // A code that came with a vote is spent even if the poll has
        // meanwhile left invite mode, so that it cannot vote again if the
        // mode returns; an unknown or spent one is refused in invite mode.
        let slot = match invite {
            Some(code) => {
                let mac = poll.invite_mac(&code)?;
                match tx.code_slot(id.as_str(), &mac)? {
                    Some(slot) if !poll.state.is_spent(slot) => Some(slot),
                    _ if poll.invite_only => return Err(Error::InviteRefused(InviteRefusal::UnknownOrUsed)),
                    _ => None,
                }
            }
            None => None,
        };
        // Staged: the key puts the ballot with its poll's other new ones
        // until the mix gives it its place. A ballot with a receipt carries
        // the receipt's tag, and its key is drawn from it, so the receipt
        // finds it without an index.
        let tag = receipt.as_ref().map(|r| Tag::Receipt(receipt_tag(r)));
        let key = match &tag {
            Some(tag) => staged_key(&poll.key, tag.bytes()),
            None => random_key(None)?,
        };
        let plain = rows::ballot_bytes(&poll.layout, today, ballot, tag.as_ref())?;
        let sealed = poll.key.seal(&place::ballot(id.as_str(), &key), &plain).map_err(Error::internal)?;
        if let Some(slot) = slot {
            poll.state.set_spent(slot, true)?;
        }
        // Counted first (in memory), uncounted if the ballot is not stored:
        // no ballot is ever stored without its counts.
        self.polls.count(id, (ballot, today), (&key, &sealed), 1)?;
        // What the digest counted of the sealed value, kept to take it back.
        let ends = Digest::ends(&sealed);
        if let Err(e) = tx.insert_ballot(id.as_str(), &key, sealed) {
            self.polls.count(id, (ballot, today), (&key, &ends), -1)?;
            if let (Some(slot), Some(poll)) = (slot, self.polls.get(tx, &self.keys, &self.seen, id)?) {
                poll.state.set_spent(slot, false)?;
            }
            return Err(e);
        }
        self.fresh.add(id.as_str());
        Ok(Outcome::Done)
    }
}
