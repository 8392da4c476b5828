//! The words the generator draws from: hat styles with their prices, colours, sizes,
//! customer names and streets. Changing any list changes every event stream, so the
//! lists only ever grow at the end, and only with a new spec version.

/// Hat styles and their unit prices in cents.
pub const PRODUCTS: &[(&str, i64)] = &[
    ("Fedora", 8_900),
    ("Fez", 4_500),
    ("Cloche", 6_200),
    ("Pork Pie", 7_400),
    ("Top Hat", 15_900),
    ("Bowler", 11_000),
    ("Trilby", 6_900),
    ("Beret", 3_200),
    ("Tin Foil Hat", 999),
    ("Panama", 12_500),
    ("Deerstalker", 9_800),
    ("Boater", 8_200),
];

/// Hat colours.
pub const COLOURS: &[&str] = &[
    "Burnt Sienna",
    "Midnight Blue",
    "Bottle Green",
    "Charcoal",
    "Ivory",
    "Oxblood",
    "Mustard",
    "Dove Grey",
    "Camel",
    "Plum",
    "Teal",
    "Scarlet",
];

/// Hat sizes.
pub const SIZES: &[&str] = &[
    "6 3/4", "6 7/8", "7", "7 1/8", "7 1/4", "7 3/8", "7 1/2", "7 5/8", "7 3/4",
];

/// Customers' first names.
pub const FIRST_NAMES: &[&str] = &[
    "Ada", "Bertie", "Clara", "Dev", "Edith", "Femi", "Greta", "Hugo", "Ines", "Jun", "Kofi",
    "Lena", "Mateo", "Nadia", "Otto", "Priya", "Quinn", "Rosa", "Sami", "Tove",
];

/// Customers' last names.
pub const LAST_NAMES: &[&str] = &[
    "Abbott",
    "Baptiste",
    "Chen",
    "Duarte",
    "Eriksen",
    "Fitzgerald",
    "Gupta",
    "Hale",
    "Ibsen",
    "Jovanovic",
    "Kowalski",
    "Lindqvist",
    "Mensah",
    "Nakamura",
    "Okafor",
    "Petrov",
    "Quist",
    "Reyes",
    "Schmidt",
    "Tanaka",
];

/// Streets of delivery addresses.
pub const STREETS: &[&str] = &[
    "Milliner Row",
    "Bowler Lane",
    "Felt Street",
    "Brim Avenue",
    "Crown Court",
    "Hatband Road",
    "Ribbon Walk",
    "Straw Market",
];

/// Cities of delivery addresses.
pub const CITIES: &[&str] = &[
    "Luton",
    "Stockport",
    "Denton",
    "Danbury",
    "Guadalajara",
    "Cuenca",
    "Montecristi",
    "Florence",
];
