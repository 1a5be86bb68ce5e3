//! Results of ranked-choice questions: the Schulze method.
//!
//! A ranked question's ballot gives each option a rank (`1` = first choice)
//! or leaves it unranked. Results are computed with the Schulze method from
//! a square matrix of pairwise counters, where `pairwise[i][j]` is the number
//! of ballots that strictly prefer option `i` to option `j`. The store updates
//! these counters as each ballot arrives ([`preferred_pairs`] says exactly
//! which cells to increment), so computing results never rescans ballots.
//!
//! Ballot semantics:
//! - a ranked option is preferred to every unranked option;
//! - unranked options are tied with each other (no count either way);
//! - among ranked options a lower rank number is preferred;
//! - equal ranks are ties (callers normally forbid repeated ranks, but every
//!   input is accepted).
//!
//! Promises:
//! - every function is total: length mismatches and non-square matrices are
//!   tolerated (missing ranks are unranked, missing cells read as `0`) and
//!   nothing panics or indexes out of bounds;
//! - [`ranking`] is deterministic: it depends only on the counters, and each
//!   place lists its option indices in ascending order;
//! - an option never shares a place with, or is placed below, an option it
//!   beats; within a place no option beats another;
//! - [`ranking`] runs in O(n³) time and O(n²) space; questions have at most
//!   12 options, so this is negligible.

/// Whether a ballot strictly prefers an option ranked `a` to one ranked `b`.
fn prefers(a: Option<u8>, b: Option<u8>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// The pairs `(i, j)` such that the ballot strictly prefers option `i` to
/// option `j`, in ascending `(i, j)` order. These are exactly the cells
/// `pairwise[i][j]` that one ballot increments.
///
/// An iterator, not a list: the writer counts every ballot through it, and
/// a ballot of 20 ranked questions of 12 options has 1,320 such pairs
/// (made and collected into lists, 11.9 % of the writer's samples under
/// the audit's load; counting took 13.6 % with the lists, 9.2 % without).
pub fn preferred_pairs(ranks: &[Option<u8>]) -> impl Iterator<Item = (usize, usize)> + '_ {
    ranks.iter().enumerate().flat_map(move |(i, &a)| {
        ranks.iter().enumerate().filter(move |&(j, &b)| i != j && prefers(a, b)).map(move |(j, _)| (i, j))
    })
}

/// Adds one ballot to the pairwise counters: `pairwise[i][j] += 1` for each
/// pair where option `i` is strictly preferred to option `j`.
///
/// The number of options is `pairwise.len()`. Options missing from `ranks`
/// count as unranked; ranks beyond the matrix and cells missing from short
/// rows are ignored. Counters saturate instead of overflowing.
///
/// For the tests of the method: polld counts a ballot through
/// `Ballot::try_for_each_counter` into its sealed tallies (`store::rows::tally`).
#[cfg(test)]
fn add_ballot(pairwise: &mut [Vec<u64>], ranks: &[Option<u8>]) {
    let padded: Vec<Option<u8>> = (0..pairwise.len()).map(|i| ranks.get(i).copied().flatten()).collect();
    for (i, j) in preferred_pairs(&padded) {
        if let Some(cell) = pairwise.get_mut(i).and_then(|row| row.get_mut(j)) {
            *cell = cell.saturating_add(1);
        }
    }
}

/// The option this ballot ranks best (lowest rank number).
///
/// Returns `None` if nothing is ranked, or if several options share the best
/// rank: a tied first preference counts for no option.
#[must_use]
pub fn first_choice(ranks: &[Option<u8>]) -> Option<usize> {
    let best = ranks.iter().flatten().min()?;
    let mut at_best = ranks.iter().enumerate().filter(|&(_, rank)| rank.as_ref() == Some(best)).map(|(i, _)| i);
    let first = at_best.next()?;
    match at_best.next() {
        Some(_) => None,
        None => Some(first),
    }
}

/// The Schulze ranking as places, best first; each place lists the indices
/// of the options sharing it, ascending.
///
/// The number of options is `pairwise.len()` (the number of rows); missing
/// cells read as `0`. Link strength uses winning votes: the link `i → j` has
/// strength `pairwise[i][j]` if that exceeds `pairwise[j][i]`, else `0`.
/// Strongest paths are computed with the Floyd–Warshall widest-path
/// algorithm, and `i` beats `j` when the strongest path `i → j` is stronger
/// than the strongest path `j → i`.
///
/// That relation is transitive (a strict partial order), so some remaining
/// option is always unbeaten; each place is the set of remaining options that
/// no remaining option beats. Guarantees:
/// - options in one place do not beat each other;
/// - no option beats an option in an earlier place;
/// - every option after the first place is beaten by some option in the
///   place just before it.
///
/// Incomparability is not transitive in general: `a` may beat `b` while `c`
/// is beaten by neither. Then `a` and `c` share the first place and `b` comes
/// second although `c` does not beat `b`. When the relation is a weak order
/// (no such triple), the places are exactly its tie classes.
#[must_use]
pub fn ranking(pairwise: &[Vec<u64>]) -> Vec<Vec<usize>> {
    let n = pairwise.len();
    let cell = |i: usize, j: usize| -> u64 { pairwise.get(i).and_then(|row| row.get(j)).copied().unwrap_or(0) };

    // Direct links (winning votes).
    let mut strength: Vec<Vec<u64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    let (forward, backward) = (cell(i, j), cell(j, i));
                    if i != j && forward > backward { forward } else { 0 }
                })
                .collect()
        })
        .collect();

    // Widest paths. Row `k` does not change while `k` is the intermediate
    // (its diagonal is 0), so a copy of it can be read while other rows
    // are updated.
    for k in 0..n {
        let row_k = strength[k].clone();
        for (i, row) in strength.iter_mut().enumerate() {
            if i == k {
                continue;
            }
            let to_k = row[k];
            if to_k == 0 {
                continue;
            }
            for (j, (cell, &from_k)) in row.iter_mut().zip(&row_k).enumerate() {
                if j != i {
                    *cell = (*cell).max(to_k.min(from_k));
                }
            }
        }
    }

    let beats = |i: usize, j: usize| strength[i][j] > strength[j][i];

    let mut remaining: Vec<usize> = (0..n).collect();
    let mut places = Vec::new();
    while !remaining.is_empty() {
        let (place, rest): (Vec<usize>, Vec<usize>) =
            remaining.iter().partition(|&&j| !remaining.iter().any(|&i| beats(i, j)));
        if place.is_empty() {
            // Unreachable: the Schulze relation is transitive, so some
            // remaining option is unbeaten. Stay total regardless.
            places.push(remaining);
            break;
        }
        places.push(place);
        remaining = rest;
    }
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize) -> Vec<Vec<u64>> {
        vec![vec![0; n]; n]
    }

    /// Ranks for a strict order given as option indices, best first.
    fn order(n: usize, best_first: &[usize]) -> Vec<Option<u8>> {
        let mut ranks = vec![None; n];
        for (pos, &opt) in best_first.iter().enumerate() {
            ranks[opt] = Some(u8::try_from(pos + 1).unwrap());
        }
        ranks
    }

    #[test]
    fn wikipedia_example() {
        // A=0, B=1, C=2, D=3, E=4.
        let groups: [(u32, &str); 8] = [
            (5, "ACBED"),
            (5, "ADECB"),
            (8, "BEDAC"),
            (3, "CABED"),
            (7, "CAEBD"),
            (2, "CBADE"),
            (7, "DCEBA"),
            (8, "EBADC"),
        ];
        let mut pw = matrix(5);
        for (count, letters) in groups {
            let best_first: Vec<usize> = letters.bytes().map(|b| usize::from(b - b'A')).collect();
            let ranks = order(5, &best_first);
            for _ in 0..count {
                add_ballot(&mut pw, &ranks);
            }
        }
        let expected_d =
            [[0, 20, 26, 30, 22], [25, 0, 16, 33, 18], [19, 29, 0, 17, 24], [15, 12, 28, 0, 14], [23, 27, 21, 31, 0]];
        for (row, expected) in pw.iter().zip(expected_d) {
            assert_eq!(row.as_slice(), expected.as_slice());
        }
        assert_eq!(ranking(&pw), vec![vec![4], vec![0], vec![2], vec![1], vec![3]]);
    }

    #[test]
    fn condorcet_cycle_with_equal_strengths_shares_one_place() {
        let mut pw = matrix(3);
        add_ballot(&mut pw, &order(3, &[0, 1, 2]));
        add_ballot(&mut pw, &order(3, &[1, 2, 0]));
        add_ballot(&mut pw, &order(3, &[2, 0, 1]));
        assert_eq!(ranking(&pw), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn no_ballots_ties_everyone() {
        assert_eq!(ranking(&matrix(4)), vec![vec![0, 1, 2, 3]]);
    }

    #[test]
    fn single_ballot_ranking_one_option() {
        let mut pw = matrix(3);
        add_ballot(&mut pw, &[None, Some(1), None]);
        assert_eq!(pw, vec![vec![0, 0, 0], vec![1, 0, 1], vec![0, 0, 0]]);
        assert_eq!(ranking(&pw), vec![vec![1], vec![0, 2]]);
    }

    #[test]
    fn empty_and_non_square_inputs() {
        assert!(ranking(&[]).is_empty());
        // Short and long rows: missing cells read as 0, extra cells ignored.
        let pw = vec![vec![], vec![3, 0, 9, 9], vec![0]];
        assert_eq!(ranking(&pw), vec![vec![1], vec![0, 2]]);
    }

    #[test]
    fn preferred_pairs_semantics() {
        // Equal ranks tie; ranked beats unranked; unranked tie.
        let pairs: Vec<_> = preferred_pairs(&[Some(2), None, Some(1), Some(2), None]).collect();
        assert_eq!(pairs, vec![(0, 1), (0, 4), (2, 0), (2, 1), (2, 3), (2, 4), (3, 1), (3, 4)]);
        assert_eq!(preferred_pairs(&[]).count(), 0);
        assert_eq!(preferred_pairs(&[None, None]).count(), 0);
    }

    #[test]
    fn first_choice_cases() {
        assert_eq!(first_choice(&[]), None);
        assert_eq!(first_choice(&[None, None]), None);
        assert_eq!(first_choice(&[Some(2), Some(1), None]), Some(1));
        assert_eq!(first_choice(&[None, Some(3)]), Some(1));
        assert_eq!(first_choice(&[Some(1), None, Some(1)]), None);
        assert_eq!(first_choice(&[Some(1), Some(2), Some(2)]), Some(0));
    }

    #[test]
    fn add_ballot_length_mismatches_do_not_panic() {
        // Fewer ranks than options: the missing ones are unranked.
        let mut pw = matrix(3);
        add_ballot(&mut pw, &[Some(1)]);
        assert_eq!(pw, vec![vec![0, 1, 1], vec![0; 3], vec![0; 3]]);

        // More ranks than options: the extra ones are ignored.
        let mut pw = matrix(2);
        add_ballot(&mut pw, &[Some(2), Some(1), Some(0), None]);
        assert_eq!(pw, vec![vec![0, 0], vec![1, 0]]);

        // Ragged matrix: cells outside short rows are skipped.
        let mut pw = vec![vec![0], vec![], vec![0, 0, 0, 0]];
        add_ballot(&mut pw, &[Some(3), Some(2), Some(1)]);
        assert_eq!(pw, vec![vec![0], vec![], vec![1, 1, 0, 0]]);

        let mut empty: Vec<Vec<u64>> = Vec::new();
        add_ballot(&mut empty, &[Some(1), None]);
        assert!(empty.is_empty());

        let mut full = vec![vec![u64::MAX; 2]; 2];
        add_ballot(&mut full, &[Some(1), None]);
        assert_eq!(full[0][1], u64::MAX);
    }

    // ---- Property test against an independent brute force. ----

    struct XorShift64(u64);

    impl XorShift64 {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x
        }

        /// Uniform-ish in `0..n` (n > 0).
        fn below(&mut self, n: usize) -> usize {
            usize::try_from(self.next() % u64::try_from(n).unwrap()).unwrap()
        }
    }

    fn random_ballot(rng: &mut XorShift64, n: usize) -> Vec<Option<u8>> {
        if rng.below(4) == 0 {
            // Arbitrary ranks, repeats allowed (exercises totality).
            (0..n)
                .map(|_| {
                    let r = rng.below(n + 1);
                    (r > 0).then(|| u8::try_from(r).unwrap())
                })
                .collect()
        } else {
            // A strict partial order: a random prefix of a random permutation.
            let mut perm: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                perm.swap(i, rng.below(i + 1));
            }
            let k = rng.below(n + 1);
            order(n, &perm[..k])
        }
    }

    fn brute_pairwise(n: usize, ballots: &[Vec<Option<u8>>]) -> Vec<Vec<u64>> {
        let key = |r: Option<u8>| r.map_or(u32::MAX, u32::from);
        let mut pw = matrix(n);
        for ballot in ballots {
            for i in 0..n {
                for j in 0..n {
                    if key(ballot[i]) < key(ballot[j]) {
                        pw[i][j] += 1;
                    }
                }
            }
        }
        pw
    }

    /// Strongest path strength from `from` to `to`: the maximum over all
    /// simple paths of the weakest link, found by exhaustive DFS.
    fn brute_strongest(links: &[Vec<u64>], from: usize, to: usize) -> u64 {
        fn dfs(links: &[Vec<u64>], at: usize, to: usize, weakest: u64, visited: &mut Vec<bool>) -> u64 {
            if at == to {
                return weakest;
            }
            let mut best = 0;
            for next in 0..links.len() {
                let w = links[at][next];
                if !visited[next] && w > 0 {
                    visited[next] = true;
                    best = best.max(dfs(links, next, to, weakest.min(w), visited));
                    visited[next] = false;
                }
            }
            best
        }
        let mut visited = vec![false; links.len()];
        visited[from] = true;
        dfs(links, from, to, u64::MAX, &mut visited)
    }

    /// Places via an independent route: an option's place is the length of
    /// the longest chain of options beating it (memoised recursion), and the
    /// result is checked against the guarantees documented on `ranking`.
    /// When the relation is a weak order, the places must also equal the
    /// groups of options beating equally many options.
    fn brute_ranking(pw: &[Vec<u64>]) -> Vec<Vec<usize>> {
        let n = pw.len();
        let mut links = matrix(n);
        for i in 0..n {
            for j in 0..n {
                if i != j && pw[i][j] > pw[j][i] {
                    links[i][j] = pw[i][j];
                }
            }
        }
        let p: Vec<Vec<u64>> =
            (0..n).map(|i| (0..n).map(|j| if i == j { 0 } else { brute_strongest(&links, i, j) }).collect()).collect();
        let beats = |i: usize, j: usize| p[i][j] > p[j][i];

        // Schulze's theorem: the relation is transitive.
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    if beats(a, b) && beats(b, c) {
                        assert!(beats(a, c), "not transitive: {pw:?}");
                    }
                }
            }
        }

        fn depth(i: usize, n: usize, beats: &dyn Fn(usize, usize) -> bool, memo: &mut [Option<usize>]) -> usize {
            if let Some(d) = memo[i] {
                return d;
            }
            let d = (0..n).filter(|&j| beats(j, i)).map(|j| depth(j, n, beats, memo) + 1).max().unwrap_or(0);
            memo[i] = Some(d);
            d
        }
        let mut memo = vec![None; n];
        let depths: Vec<usize> = (0..n).map(|i| depth(i, n, &beats, &mut memo)).collect();
        let place_count = depths.iter().max().map_or(0, |d| d + 1);
        let mut places = vec![Vec::new(); place_count];
        for (i, &d) in depths.iter().enumerate() {
            places[d].push(i);
        }

        for (a, place) in places.iter().enumerate() {
            for &i in place {
                for &j in place {
                    assert!(!beats(i, j), "{i} beats {j} within a place: {pw:?}");
                }
                for earlier in &places[..a] {
                    for &j in earlier {
                        assert!(!beats(i, j), "{i} beats earlier {j}: {pw:?}");
                    }
                }
                if a > 0 {
                    assert!(places[a - 1].iter().any(|&j| beats(j, i)), "{pw:?}");
                }
            }
        }

        // Weak order (incomparability transitive): places group options by
        // how many options they beat, most first.
        let incomparable = |i: usize, j: usize| !beats(i, j) && !beats(j, i);
        let weak = (0..n)
            .all(|a| (0..n).all(|b| (0..n).all(|c| !(incomparable(a, b) && incomparable(b, c)) || incomparable(a, c))));
        if weak {
            let wins: Vec<usize> = (0..n).map(|i| (0..n).filter(|&j| beats(i, j)).count()).collect();
            let mut by_wins: Vec<usize> = (0..n).collect();
            by_wins.sort_by_key(|&i| (std::cmp::Reverse(wins[i]), i));
            let mut grouped: Vec<Vec<usize>> = Vec::new();
            for i in by_wins {
                match grouped.last_mut() {
                    Some(last) if wins[last[0]] == wins[i] => last.push(i),
                    _ => grouped.push(vec![i]),
                }
            }
            assert_eq!(grouped, places, "{pw:?}");
        }
        places
    }

    #[test]
    fn non_weak_order_is_layered() {
        // 0 beats 1; 2 is incomparable with both 0 and 1.
        let pw = vec![
            vec![0, 3, 3, 3, 3, 4],
            vec![2, 0, 3, 4, 3, 3],
            vec![3, 3, 0, 4, 4, 3],
            vec![1, 1, 2, 0, 2, 2],
            vec![2, 2, 1, 3, 0, 3],
            vec![1, 2, 1, 3, 1, 0],
        ];
        assert_eq!(ranking(&pw), vec![vec![0, 2], vec![1], vec![4], vec![5], vec![3]]);
        assert_eq!(ranking(&pw), brute_ranking(&pw));
    }

    #[test]
    fn property_matches_brute_force() {
        let mut rng = XorShift64(0x9E37_79B9_7F4A_7C15);
        for _case in 0..2_000 {
            let n = 2 + rng.below(5);
            let ballot_count = rng.below(16);
            let ballots: Vec<Vec<Option<u8>>> = (0..ballot_count).map(|_| random_ballot(&mut rng, n)).collect();

            let mut pw = matrix(n);
            for ballot in &ballots {
                add_ballot(&mut pw, ballot);
            }
            assert_eq!(pw, brute_pairwise(n, &ballots), "ballots: {ballots:?}");

            let fast = ranking(&pw);
            assert_eq!(fast, brute_ranking(&pw), "matrix: {pw:?}");
            let mut all: Vec<usize> = fast.concat();
            all.sort_unstable();
            assert_eq!(all, (0..n).collect::<Vec<_>>());
        }
    }
}
