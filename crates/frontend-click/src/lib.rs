//! Click configuration language front end: lexer, parser, elementclass flattening into the application model
