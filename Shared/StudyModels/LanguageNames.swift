import Foundation

/// A language code as a coordinator reads it ("es" → "Spanish").
public enum LanguageNames {
    public static func name(_ code: String) -> String {
        Locale(identifier: "en").localizedString(forLanguageCode: code) ?? code
    }
}
