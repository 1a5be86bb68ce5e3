//! QR codes as inline SVG: the share link on the created and admin pages,
//! each card of an invite sheet.
//!
//! Promises: drawn here, from the text alone: no request anywhere, no
//! third party sees a link.

use maud::{Markup, html};

/// `text` as a QR code: an SVG with one `path` that draws each run of dark
/// modules in a row (`M x y h len v1 h -len z`: a sheet of 1,000 cards is
/// then about a third of its size with a `rect` per run), with the
/// four-module quiet zone scanners need. Empty if the text is too long for
/// a QR code (an invite link never is).
pub fn qr_svg(text: &str, label: &str) -> Markup {
    use qrcode::{Color, EcLevel, QrCode};
    let Ok(code) = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M) else { return html! {} };
    let width = code.width();
    let colors = code.to_colors();
    const QUIET: usize = 4;
    let size = width + 2 * QUIET;
    // (x, y, length) of each horizontal run of dark modules.
    let mut runs = Vec::new();
    for (y, row) in colors.chunks(width).enumerate() {
        let mut x = 0;
        while x < width {
            if row[x] == Color::Dark {
                let start = x;
                while x < width && row[x] == Color::Dark {
                    x += 1;
                }
                runs.push((start + QUIET, y + QUIET, x - start));
            } else {
                x += 1;
            }
        }
    }
    let d: String = runs.iter().map(|(x, y, len)| format!("M{x} {y}h{len}v1h-{len}z")).collect();
    html! {
        svg.qr xmlns="http://www.w3.org/2000/svg" viewBox=(format!("0 0 {size} {size}")) role="img" aria-label=(label)
            shape-rendering="crispEdges" {
            rect width=(size) height=(size) fill="#fff" {}
            // Black is a path's default fill.
            path d=(d) {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qr_code_draws_every_dark_module_once_inside_its_quiet_zone() {
        let link = "https://polls.example/p/AAAAAAAAAAAAAAAA#invite=7K3M-7K3M-7K3M-7K3M-7K3M";
        let svg = qr_svg(link, "QR").into_string();
        let code = qrcode::QrCode::with_error_correction_level(link.as_bytes(), qrcode::EcLevel::M).ok();
        let Some(code) = code else { panic!("no QR code for {link}") };
        let dark = code.to_colors().iter().filter(|c| **c == qrcode::Color::Dark).count();
        let size = code.width() + 8;
        assert!(svg.contains(&format!("viewBox=\"0 0 {size} {size}\"")), "{svg}");
        // The runs' lengths add up to the dark modules, each run starting
        // inside the quiet zone's frame.
        let d = svg.split(" d=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or_default();
        let mut drawn = 0;
        for run in d.split('M').skip(1) {
            let (start, rest) = run.split_once('h').unwrap_or_default();
            let (x, y) = start.split_once(' ').unwrap_or_default();
            let (x, y): (usize, usize) = (x.parse().unwrap_or(0), y.parse().unwrap_or(0));
            assert!((4..size - 4).contains(&x) && (4..size - 4).contains(&y), "{run}");
            drawn += rest.split('v').next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        }
        assert_eq!(drawn, dark);
    }
}
