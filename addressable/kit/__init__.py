"""`Toolkit`: the object users hold, made of the parts below it."""
