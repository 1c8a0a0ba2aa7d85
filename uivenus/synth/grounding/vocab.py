"""Real words for synthetic screens: app domains, their items and values, menus, forms, settings, functions.

Everything here is data. `VALUES` turns a value kind ("person", "size", "date") into a random realistic
string; `FUNCTIONS` holds the phrases that describe what a control does, keyed by the same function keys
the icons and the text buttons (`TEXT_FUNCTIONS`) carry, so "delete this message" can be checked for
uniqueness on a screen.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split("|") if w.strip())


FIRST_NAMES = _words(
    "Olivia|Liam|Emma|Noah|Ava|Mateo|Sofia|Lucas|Amara|Yuki|Hiroshi|Priya|Arjun|Fatima|Omar|Chloe|Ethan|Mia|"
    "Leon|Hannah|Jonas|Elena|Marco|Giulia|Ingrid|Lars|Aisha|Kwame|Zara|Diego|Camila|Wei|Mei|Jin|Sara|David|"
    "Nora|Felix|Clara|Hugo|Ines|Tomas|Ana|Ravi|Leila|Samuel|Grace|Isaac|Maya|Oscar|Ruby|Theo|Alice|Daniel|"
    "Rosa|Pablo|Anya|Dmitri|Kofi|Lena|Victor|Julia|Ben|Nina|Eva|Adam|Iris|Kenji|Sana")
LAST_NAMES = _words(
    "Smith|Johnson|Garcia|Müller|Rossi|Nguyen|Kim|Patel|Okafor|Silva|Tanaka|Cohen|Dubois|Novak|Andersen|"
    "Kowalski|Haddad|Fernandez|Brown|Wilson|Martin|Lee|Walker|Young|Khan|Schmidt|Moreau|Jensen|Ivanova|Sato|"
    "Mendes|Lopez|Clarke|Murphy|Bianchi|Weber|Hansen|Costa|Singh|Chen|Wang|Ali|Hughes|Price|Reyes|Ortiz|"
    "Bauer|Fischer|Rahman|Mensah|Park|Evans|Turner|Collins|Stewart|Morris|Rivera|Brooks|Bennett|Gray")
CITIES = _words(
    "Lisbon|Berlin|Tokyo|Nairobi|Toronto|Melbourne|Oslo|Seoul|Lima|Cairo|Dublin|Prague|Vienna|Madrid|Austin|"
    "Denver|Chicago|Boston|Seattle|Mumbai|Bangkok|Istanbul|Warsaw|Helsinki|Zurich|Amsterdam|Montreal|Bogotá|"
    "Santiago|Singapore|Auckland|Cape Town|Athens|Budapest|Porto|Kyoto|Osaka|Hanoi|Marseille|Edinburgh")
COMPANIES = _words(
    "Northwind|Contoso|Globex|Initech|Umbrella Labs|Acme Corp|Stark Supply|Bluebird|Fabrikam|Tailspin|"
    "Wide World Importers|Lakeshore|Pinecrest|Silverline|Orbit Media|Redwood Partners|Brightpath|Cobalt Systems")
ADJECTIVES = _words(
    "quiet|golden|silver|blue|midnight|summer|winter|electric|gentle|wild|hidden|broken|northern|lucky|"
    "crimson|paper|velvet|distant|early|little|secret|bright|open|final|modern|classic|lazy|urban|cosmic")
NOUNS = _words(
    "river|garden|city|ocean|mountain|signal|window|forest|harbor|engine|planet|journey|letter|island|bridge|"
    "shadow|morning|station|canyon|meadow|lantern|orchard|thunder|compass|mirror|valley|horizon|market|echo")
PRODUCTS = _words(
    "Wireless Headphones|Running Shoes|Ceramic Mug|Desk Lamp|Backpack|Smart Watch|Yoga Mat|Water Bottle|"
    "Mechanical Keyboard|Sunglasses|Linen Shirt|Coffee Grinder|Bluetooth Speaker|Leather Wallet|Phone Case|"
    "Throw Pillow|Chef's Knife|Travel Adapter|Rain Jacket|Notebook Set|Plant Pot|Portable Charger|Wool Scarf|"
    "Cast Iron Pan|Reading Glasses|Camera Strap|Bike Helmet|Scented Candle|Tea Sampler|Monitor Stand")
SUBJECTS = _words(
    "Quarterly report draft|Lunch on Friday?|Your order has shipped|Invoice #4821|Team offsite agenda|"
    "Re: Design review notes|Flight confirmation|Weekly sync moved|Welcome to the beta|Password reset request|"
    "Photos from the trip|Budget approval needed|New comment on your post|Meeting minutes|Contract renewal|"
    "Happy birthday!|Server maintenance tonight|Dinner reservation confirmed|Updated floor plan|Job application|"
    "Your receipt from the store|Reminder: dentist appointment|Pull request ready for review|Newsletter: May edition")
FILE_STEMS = _words(
    "report|budget|invoice|notes|presentation|photo|scan|resume|contract|schedule|draft|backup|screenshot|"
    "recipe|itinerary|thesis|logo|mockup|dataset|minutes|proposal|summary|readme|config|poster|letter")
FILE_EXTS = _words("pdf|docx|xlsx|pptx|png|jpg|txt|csv|zip|md|key|mp3|mov|json|svg")
FILE_TYPES = {"pdf": "PDF document", "docx": "Word document", "xlsx": "Spreadsheet", "pptx": "Presentation",
              "png": "PNG image", "jpg": "JPEG image", "txt": "Plain text", "csv": "CSV file", "zip": "ZIP archive",
              "md": "Markdown", "key": "Keynote", "mp3": "MP3 audio", "mov": "QuickTime movie", "json": "JSON file",
              "svg": "SVG image"}
STATUSES = _words("Active|Pending|Completed|Draft|Shipped|Cancelled|In review|Paid|Overdue|Open|Closed|Archived")
PRIORITIES = _words("Low|Medium|High|Urgent")
MONTHS = _words("Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec")
WEEKDAYS = _words("Mon|Tue|Wed|Thu|Fri|Sat|Sun")
SENTENCES = _words(
    "The team will review the new design before the launch next week.|Please update your notes after the meeting.|"
    "We moved the deadline to the end of the month because of the holidays.|Great work on the latest release!|"
    "Let me know if you have any questions about the budget.|The photos from the trip look amazing.|"
    "Can we move our call to tomorrow morning?|Your package is on its way and should arrive by Friday.|"
    "Remember to back up your files before installing the update.|The quarterly numbers are better than expected.|"
    "I attached the signed contract and the updated invoice.|Lunch is on us this Friday, see you at noon.|"
    "The server will be down for maintenance between 2 and 4 AM.|Thanks for your feedback, we fixed the issue.|"
    "Check out the new features we added to the dashboard.|Your subscription renews automatically every month.|"
    "Our offices will be closed on Monday for the public holiday.|The conference room on the third floor is booked.|"
    "We are looking for volunteers to help with the charity run.|Tickets are limited, so book your seat early.|"
    "The recipe needs two cups of flour and a pinch of salt.|Traffic was light and the drive took only an hour.|"
    "The museum is open late on Thursdays until nine.|Please confirm your attendance by replying to this email.|"
    "Sales grew twelve percent compared with last quarter.|The new onboarding flow cut sign-up time in half.|"
    "Reminder: the library book is due back next Tuesday.|Our hotel was a short walk from the old town square.|"
    "We shipped a fix for the login problem this morning.|The weather should clear up by the weekend.|"
    "All tests passed and the build is ready for review.|Here are the slides from yesterday's presentation.|"
    "The kids loved the science museum, especially the planetarium.|Please keep receipts for every expense.|"
    "Storage is almost full, consider removing old backups.|The draft looks good, just a few small edits.")
#: Form field label words -> value kind used when a field is shown filled in.
FIELD_VALUES: Mapping[str, str] = {  # first match wins: specific words first
    "username": "username", "first name": "first", "last name": "last", "card number": "card", "email": "email",
    "name": "person", "city": "city", "from": "city", "to": "city", "destination": "city", "phone": "phone",
    "mobile": "phone", "company": "company", "location": "city", "title": "subject", "depart": "date",
    "return": "date", "starts": "date", "ends": "date", "website": "website", "street": "street", "zip": "zip",
    "expiry": "expiry", "cvc": "cvc", "passengers": "passengers",
}


def _person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"


def _email(rng: random.Random) -> str:
    domain = rng.choice(COMPANIES).split()[0].lower()
    return f"{rng.choice(FIRST_NAMES).lower()}.{rng.choice(LAST_NAMES).lower()}@{domain}.com"


def _date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2019, 2025)}"


def _time(rng: random.Random) -> str:
    return f"{rng.randint(1, 12)}:{rng.randint(0, 59):02d} {rng.choice(('AM', 'PM'))}"


def _size(rng: random.Random) -> str:
    unit = rng.choice(("KB", "KB", "MB", "MB", "GB"))
    return f"{rng.randint(1, 999) if unit == 'KB' else round(rng.uniform(0.1, 99), 1)} {unit}"


def _filename(rng: random.Random) -> str:
    sep = rng.choice(("_", "-", " "))
    suffix = rng.choice(("", f"{sep}v{rng.randint(2, 9)}", f"{sep}{rng.randint(2019, 2025)}", f"{sep}final"))
    return f"{rng.choice(FILE_STEMS)}{suffix}.{rng.choice(FILE_EXTS)}"


def _title(rng: random.Random) -> str:
    return f"{rng.choice(ADJECTIVES).capitalize()} {rng.choice(NOUNS).capitalize()}"


def _amount(rng: random.Random) -> str:
    return f"{rng.choice(('$', '€', '£'))}{rng.randint(1, 2999):,}.{rng.randint(0, 99):02d}"


#: Value kind -> generator of one realistic string.
VALUES: Mapping[str, Callable[[random.Random], str]] = {
    "person": _person,
    "email": _email,
    "date": _date,
    "time": _time,
    "size": _size,
    "filename": _filename,
    "subject": lambda rng: rng.choice(SUBJECTS),
    "status": lambda rng: rng.choice(STATUSES),
    "priority": lambda rng: rng.choice(PRIORITIES),
    "amount": _amount,
    "city": lambda rng: rng.choice(CITIES),
    "company": lambda rng: rng.choice(COMPANIES),
    "product": lambda rng: rng.choice(PRODUCTS),
    "title": _title,
    "artist": _person,
    "duration": lambda rng: f"{rng.randint(1, 7)}:{rng.randint(0, 59):02d}",
    "count": lambda rng: f"{rng.randint(1, 9999):,}",
    "percent": lambda rng: f"{rng.randint(1, 99)}%",
    "id": lambda rng: f"#{rng.randint(1000, 99999)}",
    "phone": lambda rng: f"+1 ({rng.randint(200, 989)}) {rng.randint(200, 999)}-{rng.randint(1000, 9999)}",
    "type": lambda rng: rng.choice(tuple(FILE_TYPES.values())),
    "sentence": lambda rng: rng.choice(SENTENCES),
    "first": lambda rng: rng.choice(FIRST_NAMES),
    "last": lambda rng: rng.choice(LAST_NAMES),
    "website": lambda rng: f"https://{rng.choice(NOUNS)}{rng.choice(NOUNS)}.com",
    "username": lambda rng: f"@{rng.choice(FIRST_NAMES).lower()}{rng.randint(1, 99)}",
    "street": lambda rng: f"{rng.randint(1, 999)} {rng.choice(NOUNS).capitalize()} {rng.choice(('St', 'Ave', 'Road'))}",
    "zip": lambda rng: f"{rng.randint(10000, 99999)}",
    "card": lambda rng: " ".join(f"{rng.randint(1000, 9999)}" for _ in range(4)),
    "expiry": lambda rng: f"{rng.randint(1, 12):02d} / {rng.randint(25, 31)}",
    "cvc": lambda rng: f"{rng.randint(100, 999)}",
    "passengers": lambda rng: f"{rng.randint(1, 4)} adults",
    "rating": lambda rng: f"{rng.randint(30, 50) / 10:.1f}",
    "weekday": lambda rng: f"{rng.choice(WEEKDAYS)} {rng.randint(1, 28)}",
}


@dataclass(frozen=True)
class Domain:
    """One kind of app: what its items are, how it navigates, what its toolbars and tables show."""

    name: str
    apps: tuple[str, ...]
    obj: str  # the noun for one item ("message", "file")
    nav: tuple[tuple[str, str], ...]  # sidebar / tab bar: (label, icon)
    actions: tuple[str, ...]  # toolbar icons
    buttons: tuple[str, ...]  # text buttons
    columns: tuple[tuple[str, str], ...]  # table: (header, value kind); the first column is the item's title
    row: tuple[str, str, str]  # list row: (title kind, subtitle kind, meta kind)
    tabs: tuple[str, ...]


DOMAINS: Mapping[str, Domain] = {d.name: d for d in (
    Domain("mail", ("Mail", "Inbox", "Outlook", "Postbox"), "message",
           (("Inbox", "mail"), ("Starred", "star"), ("Sent", "send"), ("Drafts", "file"), ("Archive", "archive"),
            ("Trash", "trash"), ("Flagged", "flag")),
           ("compose", "archive", "trash", "flag", "refresh", "paperclip", "search", "more"),
           ("Reply", "Forward", "Archive", "Mark as read", "Move to"),
           (("From", "person"), ("Subject", "subject"), ("Received", "date"), ("Size", "size")),
           ("person", "subject", "time"), ("Primary", "Social", "Updates", "Promotions")),
    Domain("files", ("Finder", "Files", "File Explorer", "Documents"), "file",
           (("Recents", "clock"), ("Desktop", "folder"), ("Documents", "file"), ("Downloads", "download"),
            ("Pictures", "image"), ("Music", "music"), ("Shared", "share"), ("iCloud Drive", "cloud")),
           ("grid", "list", "share", "trash", "upload", "download", "search", "more"),
           ("New folder", "Upload", "Rename", "Move", "Open"),
           (("Name", "filename"), ("Date modified", "date"), ("Kind", "type"), ("Size", "size")),
           ("filename", "type", "size"), ("All files", "Recent", "Shared with me", "Starred")),
    Domain("music", ("Music", "Spotify", "Tunes", "Podcasts"), "song",
           (("Listen Now", "play"), ("Browse", "grid"), ("Radio", "volume"), ("Library", "music"),
            ("Playlists", "list"), ("Favorites", "heart")),
           ("play", "skip", "heart", "share", "volume", "more", "search"),
           ("Play", "Shuffle", "Add to playlist", "Follow"),
           (("Title", "title"), ("Artist", "artist"), ("Album", "title"), ("Time", "duration")),
           ("title", "artist", "duration"), ("Songs", "Albums", "Artists", "Podcasts")),
    Domain("photos", ("Photos", "Gallery", "Lightroom"), "photo",
           (("Library", "image"), ("Memories", "clock"), ("Favorites", "heart"), ("Places", "pin"),
            ("Albums", "grid"), ("Shared", "share"), ("Recently Deleted", "trash")),
           ("share", "heart", "trash", "info", "pencil", "download", "more"),
           ("Select", "Edit", "Slideshow", "Import"),
           (("Name", "filename"), ("Taken", "date"), ("Location", "city"), ("Size", "size")),
           ("title", "city", "date"), ("Years", "Months", "Days", "All Photos")),
    Domain("notes", ("Notes", "Notebook", "Journal", "Obsidian"), "note",
           (("All Notes", "file"), ("Favorites", "star"), ("Shared", "share"), ("Archive", "archive"),
            ("Recently Deleted", "trash")),
           ("compose", "list", "image", "paperclip", "share", "trash", "search", "lock"),
           ("New note", "Share", "Pin", "Export"),
           (("Title", "title"), ("Edited", "date"), ("Words", "count"), ("Tag", "status")),
           ("title", "sentence", "date"), ("All", "Pinned", "Recent", "Tags")),
    Domain("shop", ("Shop", "Marketplace", "Store", "Boutique"), "item",
           (("Home", "home"), ("Categories", "grid"), ("Deals", "star"), ("Orders", "file"),
            ("Wishlist", "heart"), ("Account", "user")),
           ("cart", "heart", "search", "user", "filter", "share", "bell"),
           ("Add to cart", "Buy now", "Checkout", "Track order", "Compare"),
           (("Product", "product"), ("Price", "amount"), ("Status", "status"), ("Ordered", "date")),
           ("product", "amount", "rating"), ("Overview", "Reviews", "Specifications", "Shipping")),
    Domain("calendar", ("Calendar", "Agenda", "Planner"), "event",
           (("Today", "calendar"), ("Upcoming", "clock"), ("Invitations", "mail"), ("Birthdays", "star"),
            ("Holidays", "flag")),
           ("plus", "calendar", "search", "refresh", "share", "more"),
           ("New event", "Today", "Accept", "Decline", "Invite"),
           (("Event", "subject"), ("Date", "date"), ("Time", "time"), ("Location", "city")),
           ("subject", "city", "time"), ("Day", "Week", "Month", "Year")),
    Domain("finance", ("Bank", "Wallet", "Budget", "Ledger"), "transaction",
           (("Overview", "home"), ("Accounts", "user"), ("Payments", "send"), ("Cards", "lock"),
            ("Reports", "chart"), ("Settings", "gear")),
           ("plus", "download", "filter", "search", "printer", "bell", "more"),
           ("Transfer", "Pay bill", "Export", "Add account", "View statement"),
           (("Description", "company"), ("Amount", "amount"), ("Date", "date"), ("Status", "status")),
           ("company", "date", "amount"), ("Activity", "Statements", "Spending", "Budgets")),
    Domain("travel", ("Trips", "Flights", "Stays", "Voyage"), "booking",
           (("Explore", "globe"), ("Trips", "calendar"), ("Saved", "heart"), ("Inbox", "chat"),
            ("Profile", "user")),
           ("search", "heart", "share", "pin", "filter", "calendar", "user"),
           ("Book now", "Check availability", "Reserve", "View map", "Cancel booking"),
           (("Destination", "city"), ("Check-in", "date"), ("Guests", "count"), ("Total", "amount")),
           ("city", "date", "amount"), ("Flights", "Hotels", "Cars", "Experiences")),
    Domain("dashboard", ("Analytics", "Console", "Admin", "Insights", "CRM"), "record",
           (("Dashboard", "home"), ("Customers", "user"), ("Orders", "cart"), ("Reports", "chart"),
            ("Messages", "chat"), ("Integrations", "link"), ("Settings", "gear")),
           ("bell", "search", "refresh", "download", "filter", "help", "user"),
           ("Export", "Add customer", "Invite team", "Create report", "View all"),
           (("Customer", "person"), ("Email", "email"), ("Plan", "status"), ("Revenue", "amount"),
            ("Joined", "date")),
           ("person", "email", "amount"), ("Overview", "Customers", "Revenue", "Activity")),
    Domain("chat", ("Messages", "Chat", "Slack", "Signal"), "conversation",
           (("Chats", "chat"), ("Calls", "phone"), ("Contacts", "user"), ("Archived", "archive"),
            ("Settings", "gear")),
           ("compose", "phone", "video", "search", "info", "more"),
           ("New chat", "Mute", "Block", "Invite"),
           (("Name", "person"), ("Last message", "sentence"), ("Time", "time"), ("Unread", "count")),
           ("person", "sentence", "time"), ("All", "Unread", "Groups", "Channels")),
    Domain("contacts", ("Contacts", "People", "Address Book"), "contact",
           (("All Contacts", "user"), ("Favorites", "star"), ("Groups", "grid"), ("Recent", "clock")),
           ("plus", "search", "share", "phone", "mail", "pencil", "trash"),
           ("Add contact", "Import", "Edit", "Share contact"),
           (("Name", "person"), ("Phone", "phone"), ("Email", "email"), ("Company", "company")),
           ("person", "phone", "city"), ("All", "Favorites", "Groups", "Suggestions")),
)}

#: Function key -> phrases describing what a control does ({obj} = the item or container it acts on).
FUNCTIONS: Mapping[str, tuple[str, ...]] = {
    "delete": ("delete this {obj}", "remove the selected {obj}", "move the {obj} to the trash"),
    "settings": ("open settings", "open the preferences", "change the settings"),
    "search": ("search", "start a search", "look something up"),
    "home": ("go to the home page", "go home"),
    "profile": ("open my profile", "view my account"),
    "notifications": ("show my notifications", "check the latest alerts"),
    "like": ("like this {obj}", "give this {obj} a heart"),
    "favorite": ("add this {obj} to favorites", "star this {obj}"),
    "bookmark": ("bookmark this {obj}", "save this {obj} for later"),
    "add": ("add a new {obj}", "create a new {obj}"),
    "close": ("close this {obj}", "dismiss this {obj}"),
    "confirm": ("confirm", "accept and continue"),
    "edit": ("edit this {obj}", "make changes to this {obj}"),
    "compose": ("write a new message", "start a new draft"),
    "share": ("share this {obj}", "send this {obj} to someone else"),
    "download": ("download this {obj}", "save a copy to this device"),
    "upload": ("upload a {obj}", "upload files from my computer"),
    "refresh": ("refresh the content", "reload the list"),
    "menu": ("open the main menu", "show the navigation menu"),
    "more": ("show more options", "open the overflow menu"),
    "back": ("go back", "return to the previous screen"),
    "forward": ("go forward", "go to the next page"),
    "expand": ("expand this section", "open the dropdown"),
    "filter": ("filter the results", "narrow down the list"),
    "calendar": ("pick a date", "open the calendar"),
    "history": ("view the history", "see recent activity"),
    "mail": ("open my email", "check the inbox"),
    "call": ("make a phone call", "call this contact"),
    "chat": ("open the conversation", "start a chat"),
    "photo": ("take a photo", "open the camera"),
    "gallery": ("insert a picture", "open the photo gallery"),
    "video": ("start a video call", "record a video"),
    "record": ("record audio", "use voice input"),
    "play": ("play", "start playback"),
    "pause": ("pause", "pause playback"),
    "next": ("skip to the next track", "play the next song"),
    "volume": ("adjust the volume", "mute the sound"),
    "music": ("open the music player", "play some music"),
    "lock": ("lock this {obj}", "make this {obj} private"),
    "show": ("show the password", "toggle visibility"),
    "open_folder": ("open a folder", "browse folders"),
    "new_file": ("create a new document", "open a blank file"),
    "copy": ("copy this", "copy it to the clipboard"),
    "paste": ("paste from the clipboard", "insert the copied content"),
    "cut": ("cut the selection", "cut the selected text"),
    "attach": ("attach a file", "add an attachment"),
    "send": ("send the message", "send it now"),
    "cart": ("open my shopping cart", "view the cart"),
    "location": ("show the location", "set my location"),
    "wifi": ("open wireless network settings", "connect to a wireless network"),
    "bluetooth": ("manage bluetooth devices", "pair a bluetooth device"),
    "battery": ("check the battery level", "see the remaining charge"),
    "cellular": ("check the cellular signal", "see the mobile network strength"),
    "language": ("change the language", "switch the region"),
    "info": ("show more information", "view the details"),
    "help": ("get help", "open the help center"),
    "grid_view": ("switch to grid view", "show items as icons"),
    "list_view": ("switch to list view", "show items as a list"),
    "brightness": ("switch to light mode", "adjust the brightness"),
    "dark_mode": ("switch to dark mode", "turn on night mode"),
    "print": ("print this {obj}", "send it to the printer"),
    "save": ("save this {obj}", "save the changes"),
    "link": ("copy the link", "insert a hyperlink"),
    "undo": ("undo the last change", "revert my last edit"),
    "redo": ("redo the last change", "reapply what I undid"),
    "archive": ("archive this {obj}", "move this {obj} to the archive"),
    "flag": ("flag this {obj}", "mark this {obj} as important"),
    "logout": ("log out", "sign out of my account"),
    "stats": ("view statistics", "open the charts"),
    "sync": ("sync with the cloud", "back up to the cloud"),
    "toggle_sidebar": ("show or hide the sidebar", "toggle the side panel"),
    "minimize": ("minimize this window", "hide the window"),
    "maximize": ("maximize this window", "make the window fill the screen"),
    "zoom": ("zoom this window", "enlarge the window"),
    "start": ("open the start menu", "show all apps"),
    "cancel": ("cancel", "dismiss without saving"),
    "submit": ("submit the form", "send the form"),
    "sign_in": ("sign in", "log into my account"),
    "sign_up": ("create an account", "register a new account"),
    "checkout": ("proceed to checkout", "pay for my order"),
    "add_to_cart": ("add this {obj} to the cart", "put this {obj} in my basket"),
    "reply": ("reply to this message", "answer the sender"),
    "forward_message": ("forward this message", "pass this message on"),
    "next_step": ("continue to the next step", "proceed"),
    "apply": ("apply the changes", "apply these settings"),
    "reset": ("reset to defaults", "restore the default values"),
    "subscribe": ("subscribe to the newsletter", "sign up for updates"),
    "accept_cookies": ("accept all cookies", "agree to the cookie policy"),
    "new_folder": ("create a new folder", "make a folder"),
    "rename": ("rename this {obj}", "change the name of this {obj}"),
    "book": ("book this trip", "reserve it now"),
    "export": ("export the data", "export a report"),
    "select_all": ("select everything", "select all items"),
    "find": ("find text in this document", "open the find bar"),
}

#: Text-button labels whose function is clear from the word; other labels have no function key.
TEXT_FUNCTIONS: Mapping[str, str] = {
    "Delete": "delete", "Remove": "delete", "Move to Trash": "delete", "Save": "save", "Save changes": "save",
    "Cancel": "cancel", "OK": "confirm", "Done": "confirm", "Allow": "confirm", "Send": "send", "Share": "share",
    "Download": "download", "Upload": "upload", "Print": "print", "Print…": "print", "Edit": "edit",
    "Search": "search", "Settings": "settings", "Sign in": "sign_in", "Log in": "sign_in", "Sign up": "sign_up",
    "Create account": "sign_up", "Checkout": "checkout", "Add to cart": "add_to_cart", "Buy now": "checkout",
    "Reply": "reply", "Forward": "forward_message", "Archive": "archive", "Next": "next_step",
    "Continue": "next_step", "Apply": "apply", "Reset": "reset", "Submit": "submit", "Subscribe": "subscribe",
    "Accept all": "accept_cookies", "Log out": "logout", "Sign out": "logout", "Help": "help", "Close": "close",
    "Refresh": "refresh", "Copy": "copy", "Paste": "paste", "Cut": "cut", "Undo": "undo", "Redo": "redo",
    "New folder": "new_folder", "Rename": "rename", "Book now": "book", "Reserve": "book", "Export": "export",
    "Select All": "select_all", "Find…": "find", "New event": "add", "Add contact": "add", "New note": "add",
    "New chat": "compose", "Play": "play", "Open": "open_folder", "Upload files": "upload",
}

#: Menu bar menus and their items; "-" is a separator.
MENUS: Mapping[str, tuple[str, ...]] = {
    "File": ("New", "New Window", "Open…", "Open Recent", "-", "Close", "Save", "Save As…", "Export", "-",
             "Print…"),
    "Edit": ("Undo", "Redo", "-", "Cut", "Copy", "Paste", "Delete", "Select All", "-", "Find…"),
    "View": ("Show Sidebar", "Show Toolbar", "-", "Zoom In", "Zoom Out", "Actual Size", "-", "Enter Full Screen"),
    "Format": ("Font", "Text", "-", "Bold", "Italic", "Underline", "-", "Align Left", "Center"),
    "Window": ("Minimize", "Zoom", "-", "Bring All to Front", "Move to Display"),
    "Help": ("Search Help", "User Guide", "Keyboard Shortcuts", "-", "Report an Issue", "About"),
    "Go": ("Back", "Forward", "Enclosing Folder", "-", "Recents", "Documents", "Downloads", "Home"),
    "Tools": ("Options", "Extensions", "Developer Tools", "-", "Spelling", "Word Count"),
    "Insert": ("Image", "Table", "Link", "Chart", "-", "Page Break", "Footnote"),
}
SHORTCUTS: Mapping[str, str] = {
    "New": "N", "New Window": "⇧N", "Open…": "O", "Close": "W", "Save": "S", "Save As…": "⇧S", "Print…": "P",
    "Undo": "Z", "Redo": "⇧Z", "Cut": "X", "Copy": "C", "Paste": "V", "Select All": "A", "Find…": "F",
    "Zoom In": "+", "Zoom Out": "-", "Actual Size": "0", "Minimize": "M", "Bold": "B", "Italic": "I",
    "Underline": "U", "Back": "[", "Forward": "]",
}
CONTEXT_ITEMS = ("Open", "Open With", "Get Info", "Rename", "Duplicate", "Copy", "Share…", "Compress",
                 "Quick Look", "Move to Trash", "Add Tags…", "Make Alias", "Pin to Start", "Properties")

#: Named forms: (title, submit label, fields (label, placeholder, input type)).
FORMS: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = (
    ("Sign in", "Sign in", (("Email", "you@example.com", "email"), ("Password", "Enter your password", "password"))),
    ("Create your account", "Create account", (("Full name", "Jane Doe", "text"),
                                               ("Email", "name@company.com", "email"),
                                               ("Password", "At least 8 characters", "password"),
                                               ("Confirm password", "Repeat password", "password"))),
    ("Shipping address", "Continue", (("Full name", "First and last name", "text"),
                                      ("Street address", "123 Main St", "text"), ("City", "City", "text"),
                                      ("ZIP code", "ZIP / Postal code", "text"), ("Phone", "Phone number", "tel"))),
    ("Payment details", "Pay now", (("Card number", "1234 5678 9012 3456", "text"),
                                    ("Name on card", "Cardholder", "text"),
                                    ("Expiry date", "MM / YY", "text"), ("CVC", "3 digits", "text"))),
    ("Contact us", "Submit", (("Name", "Your name", "text"), ("Email address", "Your email", "email"),
                              ("Subject", "How can we help?", "text"), ("Message", "Write your message", "textarea"))),
    ("Edit profile", "Save changes", (("First name", "First name", "text"), ("Last name", "Last name", "text"),
                                      ("Username", "@username", "text"), ("Website", "https://", "url"),
                                      ("Bio", "Tell us about yourself", "textarea"))),
    ("New event", "Save", (("Title", "Event title", "text"), ("Location", "Add location", "text"),
                           ("Starts", "Start time", "text"), ("Ends", "End time", "text"),
                           ("Notes", "Add notes", "textarea"))),
    ("Find flights", "Search flights", (("From", "Departure city", "text"), ("To", "Destination city", "text"),
                                        ("Depart", "Select date", "text"), ("Return", "Select date", "text"),
                                        ("Passengers", "1 adult", "text"))),
    ("New contact", "Done", (("First name", "First", "text"), ("Last name", "Last", "text"),
                             ("Company", "Company", "text"), ("Mobile", "Phone number", "tel"),
                             ("Email", "Email", "email"))),
    ("Reset password", "Send reset link", (("Email address", "Enter the email you signed up with", "email"),)),
)
CHECKBOX_LABELS = _words(
    "Remember me|Keep me signed in|I agree to the Terms of Service|Send me product updates|Save this address|"
    "Use as billing address|Notify attendees|Make this my default|Subscribe to the newsletter")

#: Settings rows: (label, icon, control kind: toggle / value / link).
SETTINGS_ROWS: tuple[tuple[str, str, str], ...] = (
    ("Wi-Fi", "wifi", "value"), ("Bluetooth", "bluetooth", "toggle"), ("Airplane Mode", "send", "toggle"),
    ("Notifications", "bell", "link"), ("Sounds & Haptics", "volume", "link"), ("Focus", "moon", "link"),
    ("Screen Time", "clock", "link"), ("General", "gear", "link"), ("Display & Brightness", "sun", "link"),
    ("Wallpaper", "image", "link"), ("Privacy & Security", "lock", "link"), ("Battery", "battery", "value"),
    ("Location Services", "pin", "toggle"), ("Language & Region", "globe", "value"),
    ("Cellular", "signal", "link"), ("Passwords", "lock", "link"), ("Mail", "mail", "link"),
    ("Camera", "camera", "link"), ("Photos", "image", "link"), ("Dark Mode", "moon", "toggle"),
    ("Auto-Lock", "lock", "value"), ("iCloud Backup", "cloud", "toggle"), ("Downloads", "download", "value"),
    ("Help & Feedback", "help", "link"), ("About", "info", "link"), ("Storage", "chart", "value"),
    ("Keyboard", "grid", "link"), ("Accessibility", "eye", "link"), ("Printers & Scanners", "printer", "link"),
    ("Account", "user", "link"), ("Sync", "refresh", "toggle"), ("Calendar", "calendar", "link"),
)
SETTING_VALUES = _words("On|Off|Home-5G|Automatic|English|30 seconds|1 minute|Never|84%|Default|Always|"
                        "Wi-Fi only|Standard|128 GB|Medium|Daily")
SETTING_TOGGLE_EXTRAS = _words(
    "Show previews|Allow notifications|Automatic updates|Low Power Mode|Night Shift|True Tone|Auto-Brightness|"
    "Show on Lock Screen|Vibrate on ring|Share analytics|Background refresh|Hey Siri|Raise to wake|Sync contacts")

WEB_NAV = _words("Products|Solutions|Pricing|Docs|Blog|About|Careers|Support|Community|Customers|Resources|"
                 "Features|Enterprise|Contact|Download|Changelog")
FOOTER_LINKS = _words("Privacy|Terms|Cookies|Status|Security|Sitemap|Accessibility|Press|Partners|Investors")
HEADLINES = _words(
    "Build faster with less code|Your money, simplified|Find your next adventure|Everything you need to ship|"
    "Music for every moment|Work together, anywhere|The smarter way to shop|Plan trips you will remember|"
    "Analytics that make sense|Stay close to the people who matter|Organize your life in one place")
WINDOWS_RIBBON_TABS = _words("File|Home|Insert|Design|Layout|References|Review|View|Share|Help|Draw")
IOS_APPS = (("Mail", "mail"), ("Calendar", "calendar"), ("Photos", "image"), ("Camera", "camera"),
            ("Maps", "pin"), ("Clock", "clock"), ("Weather", "sun"), ("Notes", "pencil"), ("Reminders", "list"),
            ("Music", "music"), ("Podcasts", "mic"), ("Settings", "gear"), ("Messages", "chat"), ("Phone", "phone"),
            ("Safari", "globe"), ("Files", "folder"), ("Wallet", "lock"), ("Stocks", "chart"),
            ("App Store", "download"), ("Contacts", "user"), ("FaceTime", "video"), ("Books", "bookmark"),
            ("Health", "heart"), ("Home", "home"), ("Translate", "globe"), ("Shortcuts", "link"))
APP_COLORS = ("#2f80ed", "#27ae60", "#eb5757", "#f2994a", "#9b51e0", "#f2c94c", "#56ccf2", "#6fcf97", "#333333",
              "#ff6b81", "#1abc9c", "#e67e22", "#34495e", "#8e44ad", "#16a085", "#c0392b")

#: Labels no generated screen is built from: extra material for negative instructions.
NEGATIVE_LABELS = _words(
    "Generate invoice|Rotate left|Crop image|Start recording|Translate page|Add signature|Scan QR code|"
    "Merge cells|Insert chart|Book a table|Order pizza|Track package|Redeem gift card|Join meeting|"
    "Enable two-factor authentication|Download receipt|Sort by price|Change avatar|Apply coupon|Rate this app|"
    "Connect wallet|Transfer ownership|Pair new device|Export as PDF|Play trailer|Open terminal|Run tests|"
    "Deploy to production|Clear history|Report spam|Unsubscribe|Add to home screen|Reset zoom|Mute microphone|"
    "Share screen|Raise hand|Leave channel|Pin message|Request refund|View invoice|Switch account|Edit profile photo")
