console.log("ocpool")
