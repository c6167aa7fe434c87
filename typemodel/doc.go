// Package typemodel is the one model of the types a binary's debug
// information describes: a graph of *Type nodes (void, base types, enums,
// structs, classes and unions with their fields, pointers, references,
// pointers to members, arrays, functions, typedefs, qualifiers), built by a
// front end (readers/elfread builds it from DWARF) and read by every
// checker, extractor and printer. It owns the one spelling of a type as C
// (Spell, Decl) and the helpers every reader of the graph needs (Strip,
// SizeOf, AlignOf), so that what one tool writes another reads back
// unchanged.
//
// The graph may hold cycles (a struct holding a pointer to itself; crafted
// input can make any loop): every walk here is bounded by MaxDepth and by
// a step budget, and the front end builds it without recursion.
//
// It is pure data and functions, and imports nothing of this module.
package typemodel
