//! The addresses of a poll: share page, results page, admin link, API
//! resource, media. Built here and nowhere else, so the JSON API, the pages
//! and `pollctl` can never disagree on a link.
//!
//! Promise: the admin token and invite codes only ever appear after `#`
//! ([`Links::admin`], [`Links::invite`]): browsers send neither the
//! fragment nor put it in a Referer, so no log sees them.

use crate::secret::{AdminToken, InviteCode, MediaId, PollId};

#[derive(Clone, Debug)]
pub struct Links {
    /// Public address of this deployment, without a trailing slash (may be
    /// empty, e.g. for `pollctl` without `--base-url`: links are then paths).
    base: String,
}

impl Links {
    pub fn new(base_url: &str) -> Links {
        Links { base: base_url.trim_end_matches('/').to_owned() }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `/p/{id}`: the share page (path only, for links within the site).
    pub fn share_path(id: &PollId) -> String {
        format!("/p/{id}")
    }

    /// `/p/{id}/results`.
    pub fn results_path(id: &PollId) -> String {
        format!("/p/{id}/results")
    }

    /// `/p/{id}/admin`: the admin page, without its key (which only ever
    /// follows in a fragment: [`Links::admin`]).
    pub fn admin_path(id: &PollId) -> String {
        format!("/p/{id}/admin")
    }

    /// `/api/polls/{id}`: the poll's API resource.
    pub fn api_path(id: &PollId) -> String {
        format!("/api/polls/{id}")
    }

    /// `/media/{id}`.
    pub fn media_path(id: &MediaId) -> String {
        format!("/media/{}", id.as_str())
    }

    pub fn share(&self, id: &PollId) -> String {
        format!("{}{}", self.base, Links::share_path(id))
    }

    pub fn results(&self, id: &PollId) -> String {
        format!("{}{}", self.base, Links::results_path(id))
    }

    /// The admin link, with the token in the fragment.
    pub fn admin(&self, id: &PollId, token: &AdminToken) -> String {
        format!("{}/p/{id}/admin#{}", self.base, token.expose())
    }

    /// An invite link: the share page, with the code in the fragment
    /// (`#invite=CODE`; the page's script puts it in the code field).
    pub fn invite(&self, id: &PollId, code: &InviteCode) -> String {
        format!("{}/p/{id}#invite={}", self.base, code.expose())
    }

    pub fn media(&self, id: &MediaId) -> String {
        format!("{}{}", self.base, Links::media_path(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_share_one_base_and_keep_the_token_in_the_fragment() {
        let links = Links::new("https://polls.example/");
        let id = PollId::generate().unwrap();
        let token = AdminToken::generate().unwrap();
        assert_eq!(links.share(&id), format!("https://polls.example/p/{id}"));
        assert_eq!(links.results(&id), format!("https://polls.example/p/{id}/results"));
        let admin = links.admin(&id, &token);
        let (before, after) = admin.split_once('#').unwrap();
        assert_eq!(before, format!("https://polls.example/p/{id}/admin"));
        assert_eq!(after, token.expose());
        let code = InviteCode::generate().unwrap();
        let invite = links.invite(&id, &code);
        assert_eq!(
            invite.split_once('#'),
            Some((links.share(&id).as_str(), format!("invite={}", code.expose()).as_str()))
        );
    }
}
