"""A history: one int64 row per stream (or per segment of the mixed loop) holding what the models' contexts
are made of. Its fields: the last eight bytes (C4 the latest four, C8 the four before), the word hashes
(W0 the current word, WP the previous one, WPP the one before that: version 2 on), the match (MLEN,
MPTR), the text lines (LINE and PLINE: where this line and the one before start), the record length
(RLEN, its candidate CAND seen CANDN times), how many bytes the history has seen (FILL); version 5's long
match (LLEN, LPTR) and text models (GAP: the bytes since the last word; GAPW: the gap before the current
word; KEY: the last word before ':' or '='; TEXT: the last five letters and digits; GROUPS: the classes of
the last six bytes; OPEN: an open bracket or quote; TYPES: the types of the last eight bytes, 3 bits each;
WLEN: the current word's length; VMATCH: how many bytes in a row agreed with the line above); version 8's image
row (ROW, the vote's candidate ROWC and its lead ROWN: lmzip.cm.image.row_done); version 10's words (WP3: the third
word back; FWORD: the line's first word; STEM: the current word's first five letters; SP1, SP2: the two words'
before: lmzip.cm.text.word_done); version 17's CASES: which of the current word and the two before hold a capital
(bit 0 the current word), RUNS: the types of the last eight runs of bytes (a run of letters is one), SHAPE: the gap's
shape (its bytes with every digit one digit), SHAPEW: the shape of the gap before the current word, SPACES: which of
the last eight bytes were spaces or newlines (bits 0-7, the latest first) and which punctuation (bits 8-15)
(lmzip.cm.text.text_done); version 19's INNER: the bytes since an open bracket (0: none open), CLAUSE: the bytes
since the last punctuation mark or bracket (a run of blanks as one), CLAUSEN: that mark (bits 0-7) and the words since
it (bits 8-15), CLAUSEW: the clause's first word, once its second starts (lmzip.cm.clauses); version 20's LKEY: the
key of the last line that held a ':' (its bytes before the first), LKCUR: this line's so far, LKSET: whether this
line's ':' came, LTEXT: this line's bytes so far (lmzip.cm.clauses.line_done), WPAT: the current word's
letters as vowels and consonants (2 bits each, the last twelve), WCASE: which of its last eight letters are capitals
(lmzip.cm.letters); version 24's CG1: the last eight character groups (one a byte), CG2: the four before them and
whether the last byte joined its group's run (lmzip.cm.groups); version 25's PH1, PH2: the last two words of the
phrase before the current word (lmzip.cm.fields).
"""

C4, C8, W0, WP, MLEN, MPTR, LINE, PLINE, RLEN, CAND, CANDN, FILL, WPP, LLEN, LPTR = range(15)
GAP, GAPW, KEY, TEXT, GROUPS, OPEN, TYPES, WLEN, VMATCH = range(15, 24)
ROW, ROWC, ROWN = range(24, 27)
WP3, FWORD, STEM, SP1, SP2 = range(27, 32)
CASES, RUNS, SHAPE, SHAPEW, SPACES = range(32, 37)
INNER, CLAUSE, CLAUSEN, CLAUSEW = range(37, 41)
LKEY, LKCUR, LKSET, LTEXT, WPAT, WCASE = range(41, 47)
CG1, CG2 = 47, 48
PH1, PH2 = 49, 50
N_STATE = 51
