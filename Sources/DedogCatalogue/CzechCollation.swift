/// Czech alphabetical order (ČSN 97 6030, simplified): č, ř, š, ž are letters of their own after c, r, s, z;
/// "ch" is one letter after h; vowels with accents and ď, ň, ť sort as their base letter, and only break ties.
enum CzechCollation {
    /// Negative, zero or positive as `a` sorts before, with, or after `b`.
    static func compare(_ a: String, _ b: String) -> Int {
        let (pa, pb) = (primary(a), primary(b))
        if pa != pb { return pa.lexicographicallyPrecedes(pb) ? -1 : 1 }
        let (sa, sb) = (a.lowercased(), b.lowercased())
        return sa == sb ? 0 : (sa.unicodeScalars.map(\.value).lexicographicallyPrecedes(sb.unicodeScalars.map(\.value)) ? -1 : 1)
    }

    private static let alphabet: [String] = [
        "a", "b", "c", "č", "d", "e", "f", "g", "h", "ch", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r", "ř",
        "s", "š", "t", "u", "v", "w", "x", "y", "z", "ž",
    ]
    private static let rank: [String: Int] = Dictionary(uniqueKeysWithValues: alphabet.enumerated().map { ($1, $0 + 10) })
    private static let secondary: [Character: String] = [
        "á": "a", "ä": "a", "ď": "d", "é": "e", "ě": "e", "ë": "e", "í": "i", "ň": "n", "ó": "o", "ö": "o",
        "ť": "t", "ú": "u", "ů": "u", "ü": "u", "ý": "y", "ç": "c", "ñ": "n",
    ]

    /// Primary weights: spaces first, then letters in Czech order; digits before letters; others ignored.
    static func primary(_ s: String) -> [Int] {
        let chars = Array(s.lowercased())
        var out: [Int] = []
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == "c", i + 1 < chars.count, chars[i + 1] == "h" {
                out.append(rank["ch"]!)
                i += 2
                continue
            }
            if c == " " || c == "-" {
                out.append(1)
            } else if let d = c.wholeNumberValue {
                out.append(2 + min(d, 7))
            } else if let r = rank[String(c)] {
                out.append(r)
            } else if let base = secondary[c], let r = rank[base] {
                out.append(r)
            }
            i += 1
        }
        return out
    }
}
