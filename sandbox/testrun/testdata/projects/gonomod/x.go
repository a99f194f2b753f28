package broken
