// Shop: catalogue with search, product page, cart, checkout with "Pay now", order confirmation.
// Catalogue, cart, orders and the last search live in app.data; the screen shown lives in the URL hash.
(function () {
  const { h, iconSet, backButton, noticeBar, hashScreens } = widgets;
  const ICONS = {
    bag: '<svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true"><path fill="currentColor" d="M7 7V6a5 5 0 0 1 10 0v1h3l-1 14H5L4 7zm2 0h6V6a3 3 0 0 0-6 0z"/></svg>',
    cart: '<svg viewBox="0 0 24 24" width="20" height="20" aria-hidden="true"><path fill="currentColor" d="M3 4h2l2.6 10.4A2 2 0 0 0 9.5 16H18v-2H9.6l-.3-1H19l2-7H6.2L5.7 4A1 1 0 0 0 4.8 3H3zm6 14a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3zm8 0a1.5 1.5 0 1 0 0 3 1.5 1.5 0 0 0 0-3z"/></svg>',
    search: '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path fill="currentColor" d="M10 3a7 7 0 0 1 5.6 11.2l5.1 5.1-1.4 1.4-5.1-5.1A7 7 0 1 1 10 3zm0 2a5 5 0 1 0 0 10 5 5 0 0 0 0-10z"/></svg>',
    lock: '<svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true"><path fill="currentColor" d="M6 10V8a6 6 0 0 1 12 0v2h1v12H5V10zm2 0h8V8a4 4 0 0 0-8 0z"/></svg>',
    check: '<svg viewBox="0 0 24 24" width="40" height="40" aria-hidden="true"><path fill="currentColor" d="M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z"/></svg>',
  };
  const product = (id, name, price, category, color, description) => ({ id, name, price, category, color, description });
  const defaults = {
    products: [
      product("p1", "Blue Mug", 1200, "Kitchen", "#2f6fd6", "A 350 ml stoneware mug with a deep blue glaze. Dishwasher and microwave safe."),
      product("p2", "Red Mug", 1200, "Kitchen", "#d1352b", "The same sturdy stoneware mug in a bright red glaze. 350 ml."),
      product("p3", "Travel Mug", 1850, "Kitchen", "#5b6770", "Insulated stainless steel travel mug with a leak-proof lid. Keeps coffee hot for 6 hours."),
      product("p4", "Wireless Headphones", 7999, "Audio", "#222831", "Bluetooth 5.3 on-ear headphones with 30 hours of battery and a built-in microphone."),
      product("p5", "Noise-Cancelling Headphones", 12900, "Audio", "#3a3f58", "Over-ear headphones with active noise cancelling and a carrying case."),
      product("p6", "Sport Earbuds Headphones", 4950, "Audio", "#1b998b", "Sweat-resistant in-ear headphones with ear hooks."),
      product("p7", "AA Batteries (8-pack)", 649, "Home", "#e0a100", "Long-lasting alkaline AA batteries, pack of 8."),
      product("p8", "Desk Lamp", 3490, "Home", "#f2c14e", "LED desk lamp with three brightness levels and a flexible neck."),
      product("p9", "Notebook A5", 450, "Office", "#7b4b94", "Dotted A5 notebook, 120 pages of 100 g/m² paper."),
      product("p10", "Gel Pens (10-pack)", 725, "Office", "#e76f51", "Smooth 0.5 mm gel pens in ten colours."),
      product("p11", "Water Bottle", 1500, "Sports", "#2a9d8f", "750 ml BPA-free bottle with a flip-top lid."),
      product("p12", "Yoga Mat", 2990, "Sports", "#8ab17d", "6 mm non-slip yoga mat with a carrying strap."),
    ],
    cart: [],
    orders: [],
    lastSearch: "",
    nextOrder: 1001,
  };
  const SHIPPING = [
    { id: "standard", label: "Standard (5–7 days)", cost: 0 },
    { id: "express", label: "Express (1–2 days)", cost: 990 },
  ];

  let app = null;
  let notice = "";
  let qty = 1;          // quantity chosen on the product page being shown
  let qtyFor = null;

  const icon = iconSet(ICONS);
  const money = (cents) => "$" + (cents / 100).toFixed(2);
  const productById = (id) => app.data.products.find((p) => p.id === id);
  const thumb = (p, size) => h("span", { class: "thumb", html:
    `<svg viewBox="0 0 40 40" width="${size}" height="${size}" aria-hidden="true"><rect width="40" height="40" rx="6" fill="${p.color}" opacity=".18"/><circle cx="20" cy="20" r="11" fill="${p.color}"/></svg>` });

  function route() {
    const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
    const screens = { product: 1, search: 1, cart: 0, checkout: 0, order: 1, orders: 0 };
    return parts[0] in screens ? { screen: parts[0], arg: parts[1] || "" } : { screen: "home", arg: "" };
  }
  const go = hashScreens(render);
  const cartCount = () => app.data.cart.reduce((n, item) => n + item.qty, 0);

  function searchForm(value) {
    return h("form", { class: "search", role: "search", onsubmit: (ev) => {
      ev.preventDefault();
      const q = ev.target.q.value.trim();
      app.data.lastSearch = q;
      app.save();
      go(q ? "#/search/" + encodeURIComponent(q) : "#/");
    } },
      h("input", { id: "search", name: "q", "data-testid": "search", type: "search", placeholder: "Search products", value, autocomplete: "off", "aria-label": "Search products" }),
      h("button", { id: "search-go", "data-testid": "search-go", type: "submit", "aria-label": "Search" }, icon("search"), "Search"));
  }

  function productGrid(items) {
    return h("ul", { class: "grid", "data-testid": "product-list" }, items.map((p) =>
      h("li", { id: "product-" + p.id, class: "card", "data-testid": "product-card", "data-id": p.id, tabindex: 0, onclick: () => go("#/product/" + p.id) },
        thumb(p, 72),
        h("div", { class: "card-text" }, h("div", { class: "name" }, p.name), h("div", { class: "price" }, money(p.price))))));
  }

  function home() {
    return [h("h2", {}, "Popular products"), productGrid(app.data.products)];
  }

  function results(q) {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const found = app.data.products.filter((p) => words.every((w) => (p.name + " " + p.category).toLowerCase().includes(w)));
    return [
      h("h2", { id: "results-title" }, found.length + " result" + (found.length === 1 ? "" : "s") + " for “" + q + "”"),
      found.length ? productGrid(found) : h("p", { class: "empty" }, "No products match your search."),
    ];
  }

  function productPage(id) {
    const p = productById(id);
    if (!p) return h("p", { class: "empty" }, "Product not found.");
    if (qtyFor !== id) { qtyFor = id; qty = 1; }
    const out = h("output", { id: "qty", "data-testid": "qty", "aria-live": "polite" }, qty);
    const step = (d) => { qty = Math.max(1, Math.min(10, qty + d)); out.textContent = qty; };
    return h("article", { class: "product", "data-testid": "product-page", "data-id": p.id },
      thumb(p, app.layout === "phone" ? 160 : 240),
      h("div", { class: "info" },
        h("h2", { id: "product-name" }, p.name),
        h("div", { class: "price big", id: "product-price" }, money(p.price)),
        h("p", { class: "desc" }, p.description),
        h("div", { class: "qty-row" },
          h("span", {}, "Quantity"),
          h("div", { class: "stepper" },
            h("button", { id: "qty-minus", "data-testid": "qty-minus", type: "button", "aria-label": "Decrease quantity", onclick: () => step(-1) }, "−"),
            out,
            h("button", { id: "qty-plus", "data-testid": "qty-plus", type: "button", "aria-label": "Increase quantity", onclick: () => step(1) }, "+"))),
        h("button", { id: "add-to-cart", "data-testid": "add-to-cart", class: "primary wide", onclick: () => {
          const line = app.data.cart.find((c) => c.productId === p.id);
          if (line) line.qty += qty; else app.data.cart.push({ productId: p.id, qty });
          notice = "Added " + qty + " × " + p.name + " to your cart.";
          qtyFor = null;
          app.save();
        } }, icon("cart"), "Add to cart")));
  }

  function cartPage() {
    const lines = app.data.cart.map((c) => ({ ...c, product: productById(c.productId) }));
    const subtotal = lines.reduce((s, l) => s + l.qty * l.product.price, 0);
    const change = (id, d) => {
      const line = app.data.cart.find((c) => c.productId === id);
      line.qty += d;
      if (line.qty < 1) app.data.cart = app.data.cart.filter((c) => c !== line);
      app.save();
    };
    if (!lines.length) return [h("h2", {}, "Your cart"), h("p", { class: "empty", "data-testid": "cart-empty" }, "Your cart is empty."),
      h("a", { href: "#/", class: "btn" }, "Continue shopping")];
    return [
      h("h2", {}, "Your cart"),
      h("ul", { class: "lines", "data-testid": "cart-lines" }, lines.map((l) =>
        h("li", { id: "line-" + l.productId, class: "line", "data-testid": "cart-line", "data-id": l.productId },
          thumb(l.product, 48),
          h("div", { class: "line-text" }, h("div", { class: "name" }, l.product.name), h("div", { class: "price" }, money(l.product.price) + " each")),
          h("div", { class: "stepper" },
            h("button", { class: "line-minus", "data-testid": "line-minus", "aria-label": "Decrease " + l.product.name, onclick: () => change(l.productId, -1) }, "−"),
            h("output", { class: "line-qty", "data-testid": "line-qty" }, l.qty),
            h("button", { class: "line-plus", "data-testid": "line-plus", "aria-label": "Increase " + l.product.name, onclick: () => change(l.productId, 1) }, "+")),
          h("button", { class: "line-remove link", "data-testid": "line-remove", onclick: () => change(l.productId, -l.qty) }, "Remove")))),
      h("div", { class: "summary" }, h("span", {}, "Subtotal"), h("b", { id: "subtotal" }, money(subtotal))),
      h("button", { id: "checkout", "data-testid": "checkout", class: "primary wide", onclick: () => go("#/checkout") }, "Checkout"),
    ];
  }

  function luhn(digits) {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) {
      let d = +digits[digits.length - 1 - i];
      if (i % 2) { d *= 2; if (d > 9) d -= 9; }
      sum += d;
    }
    return sum % 10 === 0;
  }

  function checkoutPage() {
    if (!app.data.cart.length) return cartPage();
    const lines = app.data.cart.map((c) => ({ ...c, product: productById(c.productId) }));
    const subtotal = lines.reduce((s, l) => s + l.qty * l.product.price, 0);
    const error = h("p", { id: "checkout-error", class: "error", role: "alert" });
    const field = (id, label, attrs) => [h("label", { for: id }, label),
      h("input", { id, name: id, "data-testid": id, type: "text", autocomplete: "off", ...attrs })];
    // A <select> on the desktop web, big radio cards on a phone (as real shops do).
    const shipping = app.layout === "phone"
      ? h("fieldset", { class: "radios", id: "shipping" }, h("legend", {}, "Delivery"),
        SHIPPING.map((s, i) => h("label", { class: "radio", id: "ship-" + s.id, "data-testid": "ship-" + s.id },
          h("input", { type: "radio", name: "shipping", value: s.id, checked: i === 0 }), s.label + " — " + (s.cost ? money(s.cost) : "Free"))))
      : [h("label", { for: "shipping" }, "Delivery"),
        h("select", { id: "shipping", name: "shipping", "data-testid": "shipping" },
          SHIPPING.map((s) => h("option", { value: s.id }, s.label + " — " + (s.cost ? money(s.cost) : "Free"))))];
    function pay(ev) {
      ev.preventDefault();
      const f = ev.target;
      const v = (n) => f.elements[n].value.trim();
      const card = v("card-number").replace(/[\s-]/g, "");
      const ship = SHIPPING.find((s) => s.id === (f.elements.shipping.value || "standard"));
      if (!v("full-name") || !v("address")) { error.textContent = "Enter the name and address to ship to."; return; }
      if (!/^\d{13,19}$/.test(card) || !luhn(card)) { error.textContent = "That card number is not valid."; return; }
      if (!/^(0[1-9]|1[0-2])\/\d{2}$/.test(v("card-expiry"))) { error.textContent = "Enter the expiry date as MM/YY."; return; }
      if (!/^\d{3,4}$/.test(v("card-cvc"))) { error.textContent = "Enter the 3-digit security code."; return; }
      const order = {
        id: String(app.data.nextOrder++),
        items: lines.map((l) => ({ productId: l.productId, name: l.product.name, qty: l.qty, price: l.product.price })),
        subtotal, shipping: ship.id, shippingCost: ship.cost, total: subtotal + ship.cost,
        name: v("full-name"), address: v("address"), cardLast4: card.slice(-4), status: "paid",
        placedAt: new Date().toISOString().slice(0, 16),
      };
      app.data.orders.push(order);
      app.data.cart = [];
      app.save();
      go("#/order/" + order.id);
    }
    return h("form", { class: "checkout", "data-testid": "checkout-form", onsubmit: pay, novalidate: true },
      h("h2", {}, "Checkout"),
      h("ul", { class: "mini" }, lines.map((l) => h("li", {}, h("span", {}, l.qty + " × " + l.product.name), h("span", {}, money(l.qty * l.product.price))))),
      h("div", { class: "summary" }, h("span", {}, "Subtotal"), h("b", {}, money(subtotal))),
      h("h3", {}, "Shipping"),
      field("full-name", "Full name", { autocomplete: "name" }),
      field("address", "Address", { placeholder: "Street, city" }),
      shipping,
      h("h3", {}, "Payment"),
      field("card-number", "Card number", { inputmode: "numeric", placeholder: "1234 5678 9012 3456" }),
      h("div", { class: "pair" },
        h("div", {}, field("card-expiry", "Expiry (MM/YY)", { inputmode: "numeric", placeholder: "MM/YY" })),
        h("div", {}, field("card-cvc", "CVC", { inputmode: "numeric", placeholder: "123" }))),
      error,
      h("button", { id: "pay-now", "data-testid": "pay-now", type: "submit", class: "primary wide pay" }, icon("lock"), "Pay now"));
  }

  function orderPage(id) {
    const o = app.data.orders.find((x) => x.id === id);
    if (!o) return h("p", { class: "empty" }, "Order not found.");
    return h("section", { class: "confirmation", "data-testid": "order-confirmation", "data-id": o.id },
      h("div", { class: "ok" }, icon("check")),
      h("h2", {}, "Thank you! Order #" + o.id + " is confirmed."),
      h("p", {}, "Paid " + money(o.total) + " with the card ending in " + o.cardLast4 + ". Shipping to " + o.name + ", " + o.address + "."),
      h("ul", { class: "mini" }, o.items.map((i) => h("li", {}, h("span", {}, i.qty + " × " + i.name), h("span", {}, money(i.qty * i.price))))),
      h("a", { href: "#/", class: "btn", id: "continue" }, "Continue shopping"));
  }

  function ordersPage() {
    return [h("h2", {}, "Your orders"), app.data.orders.length
      ? h("ul", { class: "mini orders" }, app.data.orders.map((o) => h("li", {}, h("a", { href: "#/order/" + o.id }, "Order #" + o.id), h("span", {}, money(o.total)))))
      : h("p", { class: "empty" }, "No orders yet.")];
  }

  function render(a) {
    if (a) app = a;
    const r = route();
    const body = { home, search: () => results(r.arg), product: () => productPage(r.arg), cart: cartPage,
      checkout: checkoutPage, order: () => orderPage(r.arg), orders: ordersPage }[r.screen]();
    const phone = app.layout === "phone";
    const top = r.screen === "home" || r.screen === "search";
    const count = cartCount();
    const cartBtn = h("a", { href: "#/cart", id: "cart-button", "data-testid": "cart-button", class: "cart-btn", "aria-label": "Cart, " + count + " items" },
      icon("cart"), phone ? null : "Cart", h("span", { class: "badge", id: "cart-count" }, count));
    const back = phone && !top
      ? backButton(() => (history.length > 1 ? history.back() : go("#/")))
      : icon("bag");
    const text = notice;
    notice = "";
    document.getElementById("root").replaceChildren(h("div", { class: "shop " + (phone ? "phone" : "web") },
      h("header", { class: "appbar" }, back,
        h("h1", {}, h("a", { href: "#/", id: "home-link" }, "Shoply")),
        phone ? null : searchForm(r.screen === "search" ? r.arg : ""),
        phone ? null : h("a", { href: "#/orders", id: "orders-link", class: "orders-link" }, "Orders"),
        cartBtn),
      phone && top ? h("div", { class: "searchbar" }, searchForm(r.screen === "search" ? r.arg : "")) : null,
      noticeBar(text, " ", h("a", { href: "#/cart", id: "view-cart" }, "View cart")),
      h("main", { "data-screen": r.screen }, body)));
  }

  uivenusApp("shop", defaults, render);
})();
