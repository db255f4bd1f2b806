"""Line-level cleaning: `line_clean` (C4's and FineWeb's line rules, per script) and
`line_freq` (lines repeated on many pages of a site, found by counting). Imports no other stage."""
