// Included by include_error.comp: line 3 is a syntax error.
uint broken(uint x) {
    return x +;
}
