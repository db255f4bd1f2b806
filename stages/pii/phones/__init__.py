"""Phone numbers, for the `pii` stage: where a candidate is (`candidates`), what a phone looks
like (`shapes`), what the text around it says (`context`), and the world's numbering plans it
is checked against (`plans`, libphonenumber's metadata)."""
