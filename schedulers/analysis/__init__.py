"""Analyses of a ``fuser.fusion`` shared by the schedulers: concrete sizes, reduction
type, persistent buffers, the domain map (reference tensor), transpose groups and
alias-only detection. Each works on the fusion as it is, without rewriting it."""
